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
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._killcases import (  # noqa: E402
    AfterLockOutcome,
    JournalOutcome,
    after_lock_iterations,
    journal_iteration,
    print_after_lock_table,
    print_journal_table,
)
from benchmarks._killworld import OPS, World, _doctor_rerun_compare, world  # noqa: E402

__all__ = ["OPS", "after_lock_iterations", "journal_iteration", "one_iteration", "world"]


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
