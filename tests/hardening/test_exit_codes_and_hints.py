"""Issue 13 class 8 (home part) and the "Also" list: exit codes and hints say what is true.

- unsafe paths or names in a lockfile are a lockfile error (exit 3, docs/LOCKFILE.md);
- a hash mismatch on a first install does not send the user to `update`; one against the
  lock does;
- `update` repairs a missing or edited file exactly as `install` does;
- `install author/pkg/<typo>` on an installed package is exit 7 with suggestions;
- a closed stdout ends quietly with 141, as git (killed by SIGPIPE) does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.lockfile import LockedFile, package_integrity
from tests.conftest import REPO, CliRunner
from tests.helpers.registry import build_registry, sample_packages

DEVTOOLS = "ontologies/author/acme/devtools"


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    specs = sample_packages()
    for spec in specs:
        spec.files_array = True  # our publish format: every file's sha256 in the manifest
    return build_registry(tmp_path / "reg", specs)


@pytest.fixture
def home(env: dict[str, str]) -> Path:
    return Path(env["ONTOSKILLS_HOME"])


# ------------------------------------------------------------ unsafe lockfile content
def _relock(lock_path: Path, edit_path: str) -> None:
    """Rename one file entry to edit_path and fix the integrity, as a careful attacker (or a
    bad merge) would: only the path rule can catch it."""
    text = lock_path.read_text()
    lock = lockfile.parse(text, lock_path)
    pkg = lock.packages["acme/devtools"]
    old = "LICENSE"
    files = [
        LockedFile(edit_path if f.path == old else f.path, f.sha256, f.size, f.executable)
        for f in pkg.files
    ]
    text = text.replace(f'path = "{old}"', f'path = "{edit_path}"')
    text = text.replace(pkg.integrity, package_integrity(files))
    lock_path.write_text(text)


@pytest.mark.parametrize("bad", ["../../../outside", "/etc/passwd", "a/../../b", "x\\\\y"])
@pytest.mark.parametrize("command", [("install",), ("ci",), ("doctor",), ("list",)])
def test_an_unsafe_path_in_the_lockfile_is_exit_3(
    cli: CliRunner, reg: Path, home: Path, bad: str, command: tuple[str, ...]
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    _relock(home / "ontoskills.lock", bad)
    before = (home / "ontoskills.lock").read_bytes()
    proc = cli(*command)
    assert proc.returncode == 3, (command, proc.returncode, proc.stderr)
    assert "ontoskills.lock" in proc.stderr and "unsafe" in proc.stderr
    assert "hint:" in proc.stderr or command == ("doctor",)  # doctor reports, not refuses
    assert (home / "ontoskills.lock").read_bytes() == before


def test_an_unsafe_package_id_in_the_lockfile_is_exit_3(
    cli: CliRunner, reg: Path, home: Path
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    lock = home / "ontoskills.lock"
    lock.write_text(lock.read_text().replace('"acme/devtools"', '"../devtools"'))
    proc = cli("install")
    assert proc.returncode == 3, proc.stderr


# ------------------------------------------------------------------------ hash hints
@pytest.mark.parametrize("served", [b"MIT!", b"not MIT\n"])  # same size, larger
def test_a_mismatch_on_a_first_install_does_not_point_to_update(
    cli: CliRunner, reg: Path, served: bytes
) -> None:
    (reg / "packages/acme/devtools/LICENSE").write_bytes(served)  # manifest unchanged
    proc = cli("--registry", str(reg), "install", "acme/devtools")
    assert proc.returncode == 4, proc.stderr
    assert "update" not in proc.stderr
    assert "maintainers" in proc.stderr


@pytest.mark.parametrize("served", [b"MIT!", b"not MIT\n"])
def test_a_mismatch_against_the_lock_points_to_update(
    cli: CliRunner, reg: Path, home: Path, served: bytes, env: dict[str, str]
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    (home / DEVTOOLS / "LICENSE").unlink()  # the tree needs a repair from the locked registry
    shutil.rmtree(env["ONTOSKILLS_CACHE_DIR"])  # ... which the store no longer holds either
    (reg / "packages/acme/devtools/LICENSE").write_bytes(served)
    proc = cli("install")
    assert proc.returncode == 4, proc.stderr
    assert "since it was locked" in proc.stderr and "`ontoskills update`" in proc.stderr


# ------------------------------------------------------------- update repairs the tree
def _tree(home: Path) -> dict[str, bytes]:
    root = home / DEVTOOLS
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_update_repairs_a_missing_file_as_install_does(
    cli: CliRunner, reg: Path, home: Path
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    intact = _tree(home)
    (home / DEVTOOLS / "debugging/scripts/run.sh").unlink()
    os.chmod(home / DEVTOOLS / "LICENSE", 0o755)  # a mode change is a damage too
    proc = cli("update", "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"reinstalled"' in proc.stdout
    assert _tree(home) == intact
    assert cli("doctor").returncode == 0


def test_update_keeps_user_edits_like_install_and_force_restores(
    cli: CliRunner, reg: Path, home: Path
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    intact = _tree(home)
    edited = home / DEVTOOLS / "debugging/notes.md"
    edited.write_text("my notes\n")
    for command in (("update",), ("--registry", str(reg), "install", "acme/devtools")):
        proc = cli(*command)
        assert proc.returncode == 0, proc.stderr
        assert "local changes" in proc.stderr and "--force" in proc.stderr
        assert edited.read_text() == "my notes\n"
    proc = cli("update", "--force")
    assert proc.returncode == 0, proc.stderr
    assert _tree(home) == intact


# ------------------------------------------------------------------ missing skill
def test_installing_a_missing_skill_of_an_installed_package_is_exit_7(
    cli: CliRunner, reg: Path, home: Path
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    before = (home / "ontoskills.lock").read_bytes()
    proc = cli("--registry", str(reg), "install", "acme/devtools/debuging")
    assert proc.returncode == 7, proc.stderr
    assert "no skill debuging" in proc.stderr
    assert "did you mean debugging?" in proc.stderr
    assert "already" not in proc.stderr
    assert (home / "ontoskills.lock").read_bytes() == before


def test_a_missing_skill_of_a_new_package_is_exit_7_with_suggestions(
    cli: CliRunner, reg: Path
) -> None:
    proc = cli("--registry", str(reg), "install", "acme/devtools/planing")
    assert proc.returncode == 7, proc.stderr
    assert "did you mean planning?" in proc.stderr


# --------------------------------------------------------------------- closed stdout
def _closed_stdout(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with stdout a pipe whose reader is already gone (`| head -0`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ontoskills", *args],
            env={**os.environ, **env, "PYTHONPATH": str(REPO)},
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    return proc


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--json"),
        ("list",),
        ("info", "acme/devtools"),
        ("info", "acme/devtools", "--json"),
        ("search", "debug"),
        ("--version",),
    ],
)
def test_a_closed_stdout_ends_quietly_with_141(
    cli: CliRunner, reg: Path, env: dict[str, str], args: tuple[str, ...]
) -> None:
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    if args[0] == "search":  # the first search says on stderr that it builds the index
        cli("search", "debug", check=True)
    proc = _closed_stdout(env, *args)
    assert proc.returncode == 141, (proc.returncode, proc.stderr)
    assert proc.stderr == "", proc.stderr  # no "error: Broken pipe", no "Exception ignored"


def test_a_failing_command_keeps_its_exit_code_when_stdout_is_closed(
    env: dict[str, str],
) -> None:
    proc = _closed_stdout(env, "info", "nobody/nothing", "--json")
    assert proc.returncode == 7, proc.stderr
    assert re.search(r"^error: .*nobody/nothing", proc.stderr, re.M)
    assert "Broken pipe" not in proc.stderr and "Exception" not in proc.stderr
