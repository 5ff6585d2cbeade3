"""`install` with no spec, `install --frozen` and a project's `sync` put back what is
damaged but keep what the user edited, as `update` does (decide.py's "same content" rows):
an edited file is left with a warning naming `--force`; a missing file is restored; `ci`
still wipes (its contract). Before: the edit was overwritten silently, exit 0."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ontoskills import lockfile
from tests.conftest import CliRunner


def _first_file(tree: Path) -> Path:
    path = sorted(tree.rglob("*.ttl"))[0]
    path.chmod(0o644)
    return path


def _locked_hash(lock: Path, pkg: str, path: Path, base: Path) -> str:
    rel = path.relative_to(base).as_posix()
    (entry,) = [f for f in lockfile.load(lock).packages[pkg].files if f.path == rel]
    return entry.sha256


def test_global_install_keeps_an_edit_and_restores_a_missing_file(
    project: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    cli_inproc("-g", "install", "acme/devtools", check=True)
    home = Path(env["ONTOSKILLS_HOME"])
    base = home / "ontologies/author/acme/devtools"
    edited = _first_file(base)
    edited.write_bytes(edited.read_bytes() + b"\n# my note\n")
    mine = edited.read_bytes()
    for args in (("install",), ("install", "--frozen")):
        proc = cli_inproc("-g", *args)
        assert proc.returncode == 0, proc.stderr
        assert "left as is, it has local changes" in proc.stderr and "--force" in proc.stderr
        assert edited.read_bytes() == mine  # the user's edit survives
    gone = sorted(p for p in base.rglob("*") if p.is_file() and p != edited)[0]
    gone.unlink()
    proc = cli_inproc("-g", "install", "--force", check=True)
    assert gone.is_file()  # repaired
    want = _locked_hash(home / "ontoskills.lock", "acme/devtools", edited, base)
    assert hashlib.sha256(edited.read_bytes()).hexdigest() == want  # --force restores


def test_project_sync_keeps_an_edit_and_ci_wipes(project: Path, cli_inproc: CliRunner) -> None:
    cli_inproc("init", check=True)
    cli_inproc("add", "acme/devtools", check=True)
    base = project / ".ontoskills/ontologies/author/acme/devtools"
    edited = _first_file(base)
    edited.write_bytes(b"# mine\n")
    proc = cli_inproc("sync")
    assert proc.returncode == 0 and "left as is" in proc.stderr, proc.stderr
    assert edited.read_bytes() == b"# mine\n"
    cli_inproc("ci", check=True)
    want = _locked_hash(project / "ontoskills.lock", "acme/devtools", edited, base)
    assert hashlib.sha256(edited.read_bytes()).hexdigest() == want
