"""Real processes on one project: syncs serialise on the project's home lock, and a SIGKILL
at any rename of `add` loses nothing (the next `sync` converges) (issue 24)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.install import homelock
from ontoskills.paths import Home
from tests.conftest import REPO, CliRunner

KILLPOINT = REPO / "benchmarks" / "_killpoint.py"


def _env(env: dict[str, str], **extra: str) -> dict[str, str]:
    return {**os.environ, **env, "PYTHONPATH": str(REPO), **extra}


def _tree_matches_lock(root: Path) -> None:
    lock = lockfile.load(root / "ontoskills.lock")
    for pid, pkg in lock.packages.items():
        folder = root / ".ontoskills/ontologies/author" / pid
        on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert on_disk == sorted(f.path for f in pkg.files), pid
    authors = root / ".ontoskills/ontologies/author"
    installed = {f"{a.name}/{p.name}" for a in authors.iterdir() for p in a.iterdir()}
    assert installed == set(lock.packages)


def test_a_sync_waits_for_the_project_lock(
    project: Path, env: dict[str, str], cli: CliRunner
) -> None:
    (project / "ontoskills.toml").write_text('[dependencies]\n"acme/design" = {}\n')
    home = Home(project / ".ontoskills")
    with homelock.hold(home, "test"):
        proc = cli("sync", extra_env={"ONTOSKILLS_LOCK_TIMEOUT": "0.2"})
        assert proc.returncode == 1 and "test" in proc.stderr, proc.stderr
        assert not (project / "ontoskills.lock").exists()
    # two at once: both finish, one after the other, with one consistent result
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "--json", "sync"],
            cwd=project,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert set(lockfile.load(project / "ontoskills.lock").packages) == {"acme/design"}
    _tree_matches_lock(project)


def _run_add(root: Path, env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(KILLPOINT), "add", "acme/devtools"],
        cwd=root,
        env=_env(env, **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_a_kill_at_any_rename_of_add_loses_nothing(
    tmp_path: Path, project: Path, env: dict[str, str], cli: CliRunner
) -> None:
    (project / "ontoskills.toml").write_text('# mine\n[dependencies]\n"acme/design" = {}\n')
    cli("sync", check=True)
    start = tmp_path / "start"
    shutil.copytree(project, start, symlinks=True)
    count = tmp_path / "count"
    done = _run_add(project, env, ONTOSKILLS_BENCH_COUNT=str(count))
    assert done.returncode == 0, done.stderr
    reference = (project / "ontoskills.lock").read_bytes()
    wanted = (project / "ontoskills.toml").read_text()
    renames = int(count.read_text())
    assert renames >= 3
    for k in range(1, renames + 1):
        os.chdir(tmp_path)
        shutil.rmtree(project)
        shutil.copytree(start, project, symlinks=True)
        os.chdir(project)  # the fixture's monkeypatch.chdir restores the cwd at the end
        killed = _run_add(project, env, ONTOSKILLS_BENCH_KILL_AT=str(k))
        assert killed.returncode == -9, (k, killed.stderr)
        manifest = (project / "ontoskills.toml").read_text()
        assert manifest in (wanted, (start / "ontoskills.toml").read_text()), k
        if manifest != wanted:
            (project / "ontoskills.toml").write_text(wanted)  # the user runs `add` again
        cli("sync", check=True)
        assert (project / "ontoskills.lock").read_bytes() == reference, k
        _tree_matches_lock(project)


def test_two_adds_at_once_both_land_in_the_manifest(
    project: Path, env: dict[str, str], cli: CliRunner
) -> None:
    (project / "ontoskills.toml").write_text("# mine\n[dependencies]\n")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "add", pid],
            cwd=project,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for pid in ("acme/design", "acme/devtools")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    text = (project / "ontoskills.toml").read_text()
    assert text.startswith("# mine\n")
    assert '"acme/design" = {}' in text and '"acme/devtools" = {}' in text
    assert set(lockfile.load(project / "ontoskills.lock").packages) == {
        "acme/design",
        "acme/devtools",
    }
    _tree_matches_lock(project)
