"""A full disk and a read-only home: a clear one-line error with an exit code, never a
traceback, and the previous tree and lock untouched.

Full disk uses a small tmpfs when we may mount one (root in a container), else
RLIMIT_FSIZE (a per-process file size cap: writes fail with EFBIG just as with ENOSPC).
Read-only uses a read-only remount of that tmpfs, else a chmod'ed home (not for root).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.hardening.hostile_check import home_view
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages


def _big(root: Path) -> Path:
    skills = [SkillSpec(f"s{i:02d}", f"skill {i}") for i in range(20)]
    assets = {f"s{i:02d}/blob.bin": (os.urandom(100_000), False) for i in range(20)}
    return build_registry(
        root, [*sample_packages(), PackageSpec(id="big/pkg", skills=skills, assets=assets)]
    )


def _run(
    env: dict[str, str], *args: str, fsize: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [sys.executable, "-m", "ontoskills", *args],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit,
        timeout=120,
    )


def _can_mount(tmp_path: Path) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    ok = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
        ).returncode
        == 0
    )
    if ok:
        subprocess.run(["umount", str(probe)], check=True)
    probe.rmdir()
    return ok


@pytest.fixture
def tmpfs_home(tmp_path: Path, env: dict[str, str]) -> Iterator[Path | None]:
    """The home on a 1.5 MB tmpfs, or None when mounting is not allowed here."""
    if not _can_mount(tmp_path):
        yield None
        return
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(home)], check=True)
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def _check_clean_failure(proc: subprocess.CompletedProcess[str], before: dict, home: Path) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode not in (0,), proc.stderr
    assert proc.stderr.strip().splitlines()[-1]
    assert home_view(home) == before
    staging = home / ".staging"
    assert not staging.exists() or not any(staging.iterdir()), list(staging.iterdir())


@pytest.mark.parametrize("how", ["tmpfs", "rlimit"])
def test_full_disk_gives_a_clear_error_and_loses_nothing(
    how: str, tmp_path: Path, env: dict[str, str], tmpfs_home: Path | None
) -> None:
    if how == "tmpfs" and tmpfs_home is None:
        pytest.skip("may not mount a tmpfs here; the rlimit variant covers it")
    reg = _big(tmp_path / "reg")
    home = Path(env["ONTOSKILLS_HOME"])
    ok = _run(env, "--registry", str(reg), "install", "acme/devtools")
    assert ok.returncode == 0, ok.stderr
    before = home_view(home)
    if how == "tmpfs":
        proc = _run(env, "--registry", str(reg), "install", "big/pkg")  # 2 MB into 1.5 MB
    else:
        proc = _run(env, "--registry", str(reg), "install", "big/pkg", fsize=50_000)
    _check_clean_failure(proc, before, home)
    assert "space" in proc.stderr.lower() or "too large" in proc.stderr.lower(), proc.stderr
    # and the home still works: doctor is clean, a later install succeeds once there is room
    assert _run(env, "doctor").returncode == 0


def test_read_only_home_gives_a_clear_error_and_loses_nothing(
    tmp_path: Path, env: dict[str, str], tmpfs_home: Path | None
) -> None:
    reg = _big(tmp_path / "reg")
    home = Path(env["ONTOSKILLS_HOME"])
    ok = _run(env, "--registry", str(reg), "install", "acme/devtools")
    assert ok.returncode == 0, ok.stderr
    before = home_view(home)
    if tmpfs_home is not None:
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    elif os.geteuid() == 0:
        pytest.skip("root ignores file modes and may not mount here")
    else:
        for p in [home, *home.rglob("*")]:
            if p.is_dir():
                p.chmod(0o555)
    try:
        for args in (("install", "acme/design"), ("remove", "acme/devtools"), ("update",)):
            proc = _run(env, "--registry", str(reg), *args)
            _check_clean_failure(proc, before, home)
            assert "read-only" in proc.stderr.lower() or "permission" in proc.stderr.lower()
    finally:
        if tmpfs_home is None:
            for p in [home, *home.rglob("*")]:
                if p.is_dir():
                    p.chmod(0o755)
