"""The contract every hostile case is checked against (shared by folder/HTTP/git suites)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import CliRunner
from tests.helpers.hostile import EVIL, Case


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


def check_case(case: Case, cli: CliRunner, tmp_path: Path, reg: str, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    before = home_view(home)
    # The cache is ours to fill; anything else new next to the home is a write outside it.
    outside_before = sorted({p.name for p in tmp_path.iterdir()} | {"cache"})
    proc = cli("--registry", str(reg), "install", EVIL, *case.args, extra_env=case.env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == case.exit_code, (case.id, proc.returncode, proc.stderr[-2000:])
    assert not any((tmp_path / "outside").iterdir()), list((tmp_path / "outside").iterdir())
    assert sorted({p.name for p in tmp_path.iterdir()} | {"cache"}) == outside_before
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
