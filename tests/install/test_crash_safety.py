"""Kill the process at every step of a commit, at random points of real installs, and run
installs concurrently: the home must always converge to a tree that matches its lock."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.install.state import package_drift
from ontoskills.install.transaction import recover
from ontoskills.paths import Home
from tests.conftest import REPO
from tests.helpers.domain import Domain
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages

# A child process that commits a transaction replacing pkg a/b (v2) and adding c/d, with
# os.replace patched to hard-exit (like SIGKILL: no cleanup, no finally) at call number N.
CHILD = r"""
import os, sys
from pathlib import Path
from ontoskills.paths import Home
from ontoskills.install import transaction as t
home = Home(Path(sys.argv[1])); kill_at = int(sys.argv[2]); new_lock = sys.argv[3].encode()
txn = t.Transaction(home)
for pid, content in (("a/b", "v2"), ("c/d", "new")):
    d = txn.stage_dir(pid); (d / "f.txt").write_text(content)
    txn.replace(home.package_dir(pid), d)
calls = 0
real = os.replace
def replace(a, b):
    global calls
    calls += 1
    if calls == kill_at:
        os._exit(9)
    return real(a, b)
t.os.replace = replace
import ontoskills.fsutil as f
f.os.replace = replace
from ontoskills.install.journal import lock_sha
lock_path = home.root / "ontoskills.lock"
txn.commit(lock_path, new_lock, old_sha=lock_sha(lock_path))
"""


def _snapshot(home: Path) -> dict[str, str]:
    out = {}
    for p in sorted((home / "ontologies").rglob("*")):
        if p.is_file():
            out[p.relative_to(home).as_posix()] = p.read_text()
    lock = home / "ontoskills.lock"
    out["LOCK"] = lock.read_text() if lock.exists() else "<none>"
    return out


@pytest.mark.parametrize("kill_at", range(1, 7))
def test_kill_at_every_step_of_commit_then_recover(tmp_path: Path, kill_at: int) -> None:
    home_path = tmp_path / "home"
    (home_path / "ontologies/author/a/b").mkdir(parents=True)
    (home_path / "ontologies/author/a/b/f.txt").write_text("v1")
    (home_path / "ontoskills.lock").write_text("old lock\n")
    old = _snapshot(home_path)
    new = {
        "ontologies/author/a/b/f.txt": "v2",
        "ontologies/author/c/d/f.txt": "new",
        "LOCK": "new lock\n",
    }
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(home_path), str(kill_at), "new lock\n"], env=env
    )
    recover(Home(home_path))
    state = _snapshot(home_path)
    if proc.returncode == 0:
        assert state == new
    else:
        assert proc.returncode == 9
        assert state in (old, new), state  # all or nothing
    assert not (home_path / ".staging").exists() or not any((home_path / ".staging").iterdir())


def _big_registry(root: Path) -> Path:
    skills = [
        SkillSpec(f"skill-{i:03d}", f"skill number {i}", intents=(f"do thing {i}",))
        for i in range(60)
    ]
    assets = {
        f"skill-{i:03d}/data/blob-{j}.bin": (os.urandom(20_000), j == 0)
        for i in range(60)
        for j in range(3)
    }
    return build_registry(
        root, [PackageSpec(id="big/pkg", skills=skills, assets=assets), *sample_packages()]
    )


def test_sigkill_mid_install_then_rerun_converges(
    domain: Domain, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _big_registry(tmp_path / "reg")
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/devtools", registry=str(reg))
    baseline = _snapshot(home)
    rng = random.Random(1234)
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    survived = 0
    for _ in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "--registry", str(reg), "install", "big/pkg"],
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        survived += proc.returncode == -signal.SIGKILL
        # Whatever happened, the tree must match the lock on disk after recovery.
        domain.doctor()  # read-only; must not crash on leftovers
        state_lock = lockfile.load(home / "ontoskills.lock")
        recover(Home(home))
        for pkg in state_lock.packages.values():
            assert package_drift(Home(home), pkg).clean
        if "big/pkg" in state_lock.packages:
            domain.remove("big/pkg")
        assert _snapshot(home) == baseline
    domain.install("big/pkg", registry=str(reg))
    assert domain.doctor().healthy  # `doctor` exits 0
    assert survived >= 1  # at least one kill landed mid-install


def test_concurrent_installs_and_removes_stay_consistent(
    tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _big_registry(tmp_path / "reg")
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    base = [sys.executable, "-m", "ontoskills", "--registry", str(reg)]
    procs = [
        subprocess.Popen(
            [*base, "install", pid],
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for pid in ("big/pkg", "acme/devtools", "acme/design")
    ]
    results = [(*p.communicate(timeout=120), p.returncode) for p in procs]
    assert [r[2] for r in results] == [0, 0, 0], results
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    assert sorted(lock.packages) == ["acme/design", "acme/devtools", "big/pkg"]
    procs = [
        subprocess.Popen(
            [*base, *args],
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in (("remove", "acme/design"), ("install", "acme/design"), ("remove", "big/pkg"))
    ]
    for p in procs:
        p.communicate(timeout=120)
    lock = lockfile.load(home.default_lockfile)
    for pkg in lock.packages.values():
        assert package_drift(home, pkg).clean
    on_disk = {f"{a.name}/{p.name}" for a in home.author_dir.iterdir() for p in a.iterdir()}
    assert on_disk == set(lock.packages)
