"""The malicious-registry suite against a folder registry, through the real CLI.

For every case: the documented exit code, no traceback, the previous install (tree, modes,
lock) byte-identical, nothing written outside the home, no staging left behind.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.hostile import EVIL, Case, build_hostile, folder_cases

CASES = folder_cases()


def snapshot(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every entry under root (not following symlinks) with its mode and content."""
    out: dict[str, tuple[int, bytes | str]] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = (st.st_mode, os.readlink(p))
            elif p.is_file():
                out[rel] = (st.st_mode, p.read_bytes())
            else:
                out[rel] = (st.st_mode, "dir")
    return out


def home_view(home: Path) -> dict[str, tuple[int, bytes | str]]:
    """What an install must not change: the tree, the lock, the config (not state/)."""
    snap = snapshot(home)
    return {
        k: v
        for k, v in snap.items()
        if not (k.startswith("state/") or k == "state" or k.startswith(".staging"))
    }


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with acme/devtools installed from a good registry; copied per case."""
    import subprocess
    import sys

    from tests.conftest import REPO

    base = tmp_path_factory.mktemp("baseline")
    build_hostile(base / "reg")
    env = {
        **os.environ,
        "ONTOSKILLS_HOME": str(base / "home"),
        "ONTOSKILLS_CACHE_DIR": str(base / "cache"),
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    }
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ontoskills",
            "--registry",
            str(base / "reg"),
            "install",
            "acme/devtools",
        ],
        env=env,
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    shutil.rmtree(base / "reg")
    return base


def check_case(case: Case, cli: CliRunner, tmp_path: Path, reg: Path, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    before = home_view(home)
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    proc = cli("--registry", str(reg), "install", EVIL, *case.args, extra_env=case.env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == case.exit_code, (case.id, proc.returncode, proc.stderr[-2000:])
    assert not any((tmp_path / "outside").iterdir()), list((tmp_path / "outside").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before
    staging = home / ".staging"
    assert not staging.exists() or not any(staging.iterdir())
    if case.stderr_has:
        assert case.stderr_has in proc.stderr
    if case.exit_code != 0:
        assert home_view(home) == before
        assert proc.stderr.strip(), "a failure must say why"
    else:
        after = home_view(home)
        assert {
            k: v
            for k, v in after.items()
            if k in before and "evil" not in k and not k.endswith((".lock", ".ttl"))
        } == {
            k: v for k, v in before.items() if "evil" not in k and not k.endswith((".lock", ".ttl"))
        }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_folder_registry(
    case: Case, cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    shutil.copytree(baseline / "home", env["ONTOSKILLS_HOME"], symlinks=True)
    if (baseline / "cache").exists():
        shutil.copytree(baseline / "cache", env["ONTOSKILLS_CACHE_DIR"], symlinks=True)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(tmp_path / "reg", mutate=case.mutate)
    check_case(case, cli, tmp_path, reg, env)


def test_symlinked_parent_in_home_is_not_followed(
    cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    """A planted author/evil -> /outside symlink must not redirect the install."""
    home = Path(env["ONTOSKILLS_HOME"])
    shutil.copytree(baseline / "home", home, symlinks=True)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", home / "ontologies/author/evil")
    reg = build_hostile(tmp_path / "reg")
    proc = cli("--registry", str(reg), "install", EVIL)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not any((tmp_path / "outside").iterdir())
    assert proc.returncode == 4, proc.stderr
    assert "symlink" in proc.stderr
