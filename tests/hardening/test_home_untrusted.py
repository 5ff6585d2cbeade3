"""Issue 13 class 1: everything under the home (and the cache) is untrusted input.

Two attacks, each through the real CLI:
- a symlink planted at EVERY folder a real home and cache contain (found by walking a home
  populated by install --model + search over HTTP, not by a hand-written list), pointing to
  a copy outside: no command may write, rename or delete anything through it;
- a hostile `.staging/<txn>/journal.json` (or hostile transaction folder): refused with
  exit 4 and the next step before anything is moved or deleted; clean journals still roll
  back and forward.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ontoskills.fsutil import sha256_file
from tests.conftest import REPO
from tests.hardening.hostile_check import snapshot
from tests.helpers.faults import FaultServer
from tests.helpers.registry import build_registry, sample_packages
from tests.helpers.tinymodel import build_tiny_model

pytestmark = pytest.mark.slow


def _run(
    base: Path, *args: str, timeout: float = 120, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ONTOSKILLS_HOME": str(base / "home"),
        "ONTOSKILLS_CACHE_DIR": str(base / "cache"),
        "HF_HOME": str(base / "hf"),
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "ONTOSKILLS_LOCK_TIMEOUT": "20",
        **(extra or {}),
    }
    for key in ("ONTOSKILLS_LOCKFILE", "ONTOSKILLS_REGISTRY", "ONTOSKILLS_TOKEN"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-m", "ontoskills", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, (proc.args, proc.returncode, proc.stderr[-2000:])
    return proc


class World:
    def __init__(self, base: Path, url: str) -> None:
        self.base, self.url = base, url


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A home and cache with every folder ontoskills makes: packages from HTTP (blobs and
    metadata in the cache), the embedding model, derived vectors, the search snapshot."""
    base = tmp_path_factory.mktemp("populated")
    reg = build_registry(base / "reg", sample_packages())
    model = build_tiny_model(base / "model")
    with FaultServer(reg) as srv:
        start = base / "start"
        _ok(_run(start, "--registry", srv.url, "install", "acme/devtools", "--model", str(model)))
        _ok(_run(start, "search", "debug failing tests"))
        yield World(start, srv.url)


def _folders(base: Path) -> list[str]:
    """Every folder of the populated home and cache, except inside package folders (their
    content is checked against the lock, not written through)."""
    out = []
    for top in ("home", "cache"):
        for dirpath, dirnames, _ in os.walk(base / top):
            rel = Path(dirpath).relative_to(base).as_posix()
            if rel.count("/") >= 5 and rel.startswith("home/ontologies/author/"):
                dirnames.clear()
                continue
            if rel not in ("home", "cache"):
                out.append(rel)
    return sorted(out)


# Folders an install of a new package over HTTP must write into: a link there is exit 4.
INSTALL_WRITES = [
    "home/.staging",
    "home/state",
    "home/ontologies",
    "home/ontologies/author",
    "home/ontologies/author/acme",
    "home/ontologies/system",
    "cache/blobs",
    "cache/blobs/sha256",
    "cache/http",
    "cache/tmp",
    "cache/derived/checked-*",  # the checks' verdicts (install/fetch.py)
]
# Every other folder a populated home and cache hold (`*`: one of a family, the first found).
OTHER_FOLDERS = [
    "home/ontologies/author/acme/devtools",
    "home/ontologies/system/embeddings",
    "home/state/derived",
    "home/state/derived/encoder",
    "home/state/derived/lock-cache",
    "home/state/derived/search-index",
    "home/state/derived/vector-cache",
    "home/state/derived/vectors",
    "home/state/derived/vectors/acme",
    "cache/blobs/sha256/*",
    "cache/derived",
    "cache/derived/checked-*/*",
    "cache/models",
]
CASES = INSTALL_WRITES + OTHER_FOLDERS


def test_every_folder_of_a_populated_home_and_cache_is_attacked(world: World) -> None:
    """The cases below cover every folder ontoskills makes; a new folder fails this until
    it is added (so a new writer cannot skip the attack)."""
    folders = _folders(world.base)
    uncovered = [f for f in folders if not any(fnmatch.fnmatchcase(f, c) for c in CASES)]
    assert not uncovered, uncovered
    missing = [c for c in CASES if not any(fnmatch.fnmatchcase(f, c) for f in folders)]
    assert not missing, missing


def _seed(world: World, run: Path) -> None:
    shutil.copytree(world.base, run, symlinks=True)


def _plant(run: Path, rel: str) -> Path:
    """Move the folder out and leave a symlink to it: returns the outside copy."""
    inside = run / rel
    outside = run / "outside" / rel.replace("/", "__")
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(inside), outside)
    os.symlink(outside, inside)
    return outside


@pytest.mark.parametrize("case", CASES)
def test_a_symlink_planted_at_a_home_or_cache_folder_is_never_followed(
    world: World, tmp_path: Path, case: str
) -> None:
    run = tmp_path / "run"
    _seed(world, run)
    rel = next(f for f in _folders(run) if fnmatch.fnmatchcase(f, case))
    outside = _plant(run, rel)
    before = snapshot(outside)
    lock = run / "home/ontoskills.lock"
    lock_before = lock.read_bytes()
    procs = {"install": _run(run, "--registry", world.url, "install", "acme/design")}
    lock_after_install = lock.read_bytes()
    procs |= {
        "search": _run(run, "search", "review code"),
        "remove": _run(run, "remove", "acme/devtools"),
        "doctor": _run(run, "doctor"),
    }
    for name, proc in procs.items():
        assert "Traceback" not in proc.stderr, (name, proc.stderr)
        # Every refusal is the documented one: exit 4, naming the link and the next step.
        if proc.returncode != 0 and name != "doctor":  # doctor reports, it does not refuse
            assert proc.returncode == 4, (name, proc.returncode, proc.stderr[-1500:])
            assert "symlink" in proc.stderr and "hint:" in proc.stderr, (name, proc.stderr)
    assert snapshot(outside) == before, f"{rel}: something was written through the link"
    assert (run / rel).is_symlink()
    if rel in INSTALL_WRITES:
        assert procs["install"].returncode == 4, procs["install"].stderr
        assert lock_after_install == lock_before  # refused before the commit
    doctor = procs["doctor"]
    if rel.startswith("home/"):
        assert doctor.returncode == 4 and f"{run / rel} is a symlink" in doctor.stderr


def test_cache_clean_removes_a_symlinked_cache_folder_not_its_target(
    world: World, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    _seed(world, run)
    outside = _plant(run, "cache/blobs")
    before = snapshot(outside)
    proc = _run(run, "cache", "clean")
    assert "Traceback" not in proc.stderr
    assert snapshot(outside) == before


# ------------------------------------------------------------------------ journals
def _txn(run: Path, name: str = "0123456789ab") -> Path:
    txn = run / "home/.staging" / name
    (txn / "new").mkdir(parents=True)
    return txn


def _journal(run: Path, **override: object) -> dict[str, object]:
    lock = run / "home/ontoskills.lock"
    doc: dict[str, object] = {
        "version": 1,
        "state": "swapping",
        "lockfile": str(lock),
        "old_lock_sha256": sha256_file(lock)[0],
        "new_lock_sha256": "0" * 64,
        "ops": [{"target": "ontologies/author/acme/devtools", "new": None, "backup": "old/0"}],
    }
    doc.update(override)
    return doc


def _op(target: str, new: str | None = None, backup: str | None = "old/0") -> dict[str, object]:
    return {"target": target, "new": new, "backup": backup}


HOSTILE_JOURNALS: dict[str, dict[str, object]] = {
    "target-traversal": {"ops": [_op("../../outside/victim")]},
    "target-absolute": {"ops": [_op("/OUTSIDE/victim")]},
    "target-author-folder": {"ops": [_op("ontologies/author/acme")]},
    "target-system-folder": {"ops": [_op("ontologies/system")]},
    "target-home-state": {"ops": [_op("state")]},
    "target-dotdot-in-shape": {"ops": [_op("ontologies/author/acme/..")]},
    "target-backslash": {"ops": [_op("ontologies/author/acme\\..\\..")]},
    "duplicate-targets": {
        "ops": [
            _op("ontologies/author/acme/devtools", backup="old/0"),
            _op("ontologies/author/acme/devtools", backup="old/1"),
        ]
    },
    "new-traversal": {"ops": [_op("ontologies/author/acme/devtools", new="../../../OUTSIDE")]},
    "new-other-package": {"ops": [_op("ontologies/author/acme/devtools", new="new/acme/design")]},
    "backup-traversal": {
        "ops": [_op("ontologies/author/acme/devtools", backup="old/../../../OUTSIDE")]
    },
    "backup-absolute": {"ops": [_op("ontologies/author/acme/devtools", backup="/OUTSIDE")]},
    "lockfile-relative": {"lockfile": "ontoskills.lock"},
    "lockfile-dotdot": {"lockfile": "/tmp/../OUTSIDE/x.lock"},
    "lockfile-device": {"lockfile": "/dev/zero"},
    "lockfile-nul": {"lockfile": "/tmp/x\u0000.lock"},
    "sha-not-hex": {"new_lock_sha256": "not a sha"},
    "unknown-state": {"state": "rolled-over"},
    "unknown-version": {"version": 2},
    "ops-not-a-list": {"ops": {"target": "ontologies/author/acme/devtools"}},
    "op-extra-field": {"ops": [{**_op("ontologies/author/acme/devtools"), "exec": "rm -rf /"}]},
    "extra-field": {"hook": "curl evil"},
}


def _fresh(world: World, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    _seed(world, run)
    (run / "OUTSIDE" / "victim").mkdir(parents=True)
    (run / "OUTSIDE" / "victim" / "precious").write_text("keep me")
    return run


def _expect_refused(run: Path, proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 4, (what, proc.returncode, proc.stderr[-1500:])
    assert "hint:" in proc.stderr, proc.stderr
    assert (run / "OUTSIDE/victim/precious").read_text() == "keep me"


@pytest.mark.parametrize("case", sorted(HOSTILE_JOURNALS))
def test_a_hostile_journal_is_refused_before_anything_moves(
    world: World, tmp_path: Path, case: str
) -> None:
    run = _fresh(world, tmp_path)
    override = json.loads(
        json.dumps(HOSTILE_JOURNALS[case]).replace("/OUTSIDE", str(run / "OUTSIDE"))
    )
    txn = _txn(run)
    (txn / "old/0").mkdir(parents=True)  # as if the package folder had been moved aside
    (txn / "journal.json").write_text(json.dumps(_journal(run, **override)))
    tree_before = snapshot(run / "home/ontologies")
    lock_before = (run / "home/ontoskills.lock").read_bytes()
    proc = _run(run, "--registry", world.url, "install", "acme/design")
    _expect_refused(run, proc, case)
    assert "journal.json" in proc.stderr and "move" in proc.stderr  # the next step
    assert snapshot(run / "home/ontologies") == tree_before
    assert (run / "home/ontoskills.lock").read_bytes() == lock_before
    assert (txn / "journal.json").exists()  # left for the user to look at


@pytest.mark.parametrize("shape", ["invalid-json", "duplicate-keys", "nan", "deep", "too-big"])
def test_a_malformed_journal_is_refused(world: World, tmp_path: Path, shape: str) -> None:
    run = _fresh(world, tmp_path)
    txn = _txn(run)
    good = json.dumps(_journal(run))
    journal = txn / "journal.json"
    if shape == "invalid-json":
        journal.write_text(good[:-5])
    elif shape == "duplicate-keys":
        journal.write_text(good[:-1] + ', "state": "committed"}')
    elif shape == "nan":
        journal.write_text(good.replace('"0000', 'NaN, "x": "0000', 1))
    elif shape == "deep":
        journal.write_text("[" * 100_000 + "]" * 100_000)
    else:
        with open(journal, "wb") as fh:  # sparse: 17 MB on paper, nothing on disk
            fh.truncate(17 * 1024 * 1024)
    proc = _run(run, "remove", "acme/devtools")
    _expect_refused(run, proc, shape)
    assert (run / "home/ontologies/author/acme/devtools/package.json").is_file()


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_journal_that_is_not_a_regular_file_is_refused_without_blocking(
    world: World, tmp_path: Path, kind: str
) -> None:
    run = _fresh(world, tmp_path)
    txn = _txn(run)
    target = run / "OUTSIDE/journal.json"
    target.write_text(json.dumps(_journal(run, ops=[_op("../../OUTSIDE/victim")])))
    if kind == "symlink":
        os.symlink(target, txn / "journal.json")
    else:
        os.mkfifo(txn / "journal.json")  # opening it for reading would block forever
    proc = _run(run, "remove", "acme/devtools", timeout=60)
    _expect_refused(run, proc, kind)


@pytest.mark.parametrize("planted", ["staging-entry", "backup-folder", "new-folder"])
def test_symlinks_inside_a_transaction_are_refused(
    world: World, tmp_path: Path, planted: str
) -> None:
    """A valid journal whose folders are links: recovery must not move the outside in."""
    run = _fresh(world, tmp_path)
    victim = run / "OUTSIDE/victim"
    if planted == "staging-entry":
        (run / "home/.staging").mkdir(exist_ok=True)
        os.symlink(victim, run / "home/.staging/0123456789ab")
    else:
        txn = _txn(run)
        journal = _journal(run)
        if planted == "backup-folder":
            (txn / "old").mkdir()
            os.symlink(victim, txn / "old/0")
        else:
            journal["ops"] = [_op("ontologies/author/acme/design", new="new/acme/design")]
            (txn / "new/acme").mkdir()
            os.symlink(victim, txn / "new/acme/design")
        (txn / "journal.json").write_text(json.dumps(journal))
    proc = _run(run, "remove", "acme/devtools")
    _expect_refused(run, proc, planted)
    assert sorted(p.name for p in victim.iterdir()) == ["precious"]
    assert not (run / "home/ontologies/author/acme/design").exists()


def test_a_journal_naming_another_lockfile_never_deletes_beside_it(
    world: World, tmp_path: Path
) -> None:
    """Roll forward/back may read the lockfile a journal names, but temp-file cleanup only
    ever happens beside this command's own lockfile."""
    run = _fresh(world, tmp_path)
    other = run / "OUTSIDE/x.lock"
    other.write_text("not ours")
    bait = run / "OUTSIDE/.x.lock.abcd1234.tmp"
    bait.write_text("looks like our temp file")
    ours = run / "home/.ontoskills.lock.abcd1234.tmp"
    ours.write_text("a dead lock write of ours")
    near_miss = run / "home/.ontoskills.lock.not-ours.tmp"
    near_miss.write_text("not the mkstemp pattern")
    txn = _txn(run)
    (txn / "journal.json").write_text(
        json.dumps(_journal(run, lockfile=str(other), state="committed", ops=[]))
    )
    proc = _ok(_run(run, "remove", "acme/devtools"))
    assert "completed interrupted transaction" in proc.stderr
    assert bait.read_text() == "looks like our temp file"
    assert not ours.exists()
    assert near_miss.exists()


@pytest.mark.parametrize("state", ["swapping", "committed"])
def test_a_clean_journal_still_rolls_back_or_forward(
    world: World, tmp_path: Path, state: str
) -> None:
    """What a killed `remove` leaves (the package moved aside, the lock old or new): the
    validated journal is followed exactly as before."""
    run = _fresh(world, tmp_path)
    home = run / "home"
    lock = home / "ontoskills.lock"
    txn = _txn(run)
    (txn / "old").mkdir()
    os.replace(home / "ontologies/author/acme/devtools", txn / "old/0")
    journal = _journal(run, state=state)
    (txn / "journal.json").write_text(json.dumps(journal))
    proc = _ok(_run(run, "--registry", world.url, "install", "acme/design"))
    if state == "swapping":  # lock still the old one: the folder is put back
        assert "rolled back interrupted transaction" in proc.stderr
        assert (home / "ontologies/author/acme/devtools/package.json").is_file()
        _ok(_run(run, "doctor"))
    else:  # committed: the removal stands (the lock on disk is what a real run wrote)
        assert "completed interrupted transaction" in proc.stderr
        assert not (home / "ontologies/author/acme/devtools").exists()
    assert not txn.exists()
    assert lock.exists()


def test_a_planted_lock_owner_cannot_write_escapes_to_the_terminal(
    world: World, tmp_path: Path
) -> None:
    from ontoskills.install import homelock
    from ontoskills.paths import Home

    run = _fresh(world, tmp_path)
    home = Home(run / "home")
    with homelock.hold(home, "install"):
        homelock.owner_file(home).write_text(
            json.dumps({"pid": "1\x1b]0;pwned\x07", "command": "install\x1b[2J"})
        )
        proc = _run(run, "remove", "acme/devtools", extra={"ONTOSKILLS_LOCK_TIMEOUT": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "locked by pid ?" in proc.stderr


# A transaction killed (os._exit, like SIGKILL) at its second rename: the journal is written,
# nothing moved yet. The home and lockfile are given as typed, with `..` in them.
KILLED_CHILD = r"""
import os, sys
from ontoskills.paths import Home
from ontoskills.install import transaction as t
home = Home.resolve(sys.argv[1]); lock = home.lockfile(sys.argv[2])
txn = t.Transaction(home)
staged = txn.stage_dir("a/b"); (staged / "f.txt").write_text("new")
txn.replace(home.package_dir("a/b"), staged)
real, calls = os.replace, [0]
def replace(a, b):
    calls[0] += 1
    if calls[0] == 2:
        os._exit(9)
    return real(a, b)
t.os.replace = replace
import ontoskills.fsutil as f
f.os.replace = replace
from ontoskills.install.journal import lock_sha
txn.commit(lock, b"new lock\n", old_sha=lock_sha(lock))
"""


def test_a_journal_for_a_lockfile_typed_with_dotdot_still_recovers(tmp_path: Path) -> None:
    """`--home x/../home --lockfile x/../home/my.lock`: the journal records the normalised
    path, so the strict journal check does not refuse our own interrupted transaction."""
    from ontoskills.install.transaction import recover
    from ontoskills.paths import Home

    (tmp_path / "x").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home/my.lock").write_text("old lock\n")
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD, "x/../home", "x/../home/my.lock"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 9, proc.stderr
    journals = list((tmp_path / "home/.staging").glob("*/journal.json"))
    assert len(journals) == 1
    assert json.loads(journals[0].read_text())["lockfile"] == str(tmp_path / "home/my.lock")
    home = Home(tmp_path / "home")
    actions = recover(home, tmp_path / "home/my.lock")
    assert any("rolled back" in a for a in actions), actions
    assert not (tmp_path / "home/ontologies/author/a/b").exists()
    assert (tmp_path / "home/my.lock").read_text() == "old lock\n"
