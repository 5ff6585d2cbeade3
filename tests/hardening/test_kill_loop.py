"""A handful of benchmarks/kill_loop.py iterations in CI: SIGKILL during install, update, ci
and remove from a folder registry, then doctor and a re-run that must converge to the exact
tree and lock of an uninterrupted run. The benchmark runs >= 50 over folder, HTTP and git."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.kill_loop import (
    OPS,
    after_lock_iterations,
    journal_iteration,
    one_iteration,
    world,
)


@pytest.mark.slow
def test_kill_anywhere_then_rerun_converges(tmp_path: Path) -> None:
    rng = random.Random(7)
    with world(tmp_path, ("folder",)) as w:
        for op in OPS:
            out = one_iteration(w, "folder", op, rng, tmp_path / "run")
            assert out.lock_after_kill in ("old", "new"), (op, out)
            assert "Traceback" not in str(out)
            assert out.converged, (op, out)


@pytest.mark.slow
def test_a_kill_that_leaves_a_journal_then_a_hostile_edit_is_refused(tmp_path: Path) -> None:
    """benchmarks/kill_loop.py's journal cases: SIGKILL at a random os.replace (often inside
    the swap, leaving .staging/<txn>/journal.json); an attacker's edit of that journal is
    refused (exit 4, nothing changed in or out of the home); the clean journal, put back,
    rolls back or forward and the re-run converges."""
    rng = random.Random(3)
    outs = []
    with world(tmp_path, ("folder",)) as w:
        for op in OPS * 2:
            out = journal_iteration(w, "folder", op, rng, tmp_path / "run")
            assert out.converged, (op, out)
            assert out.refused == out.journal_left, (op, out)
            outs.append(out)
    assert sum(o.journal_left for o in outs) >= 3, outs  # the case under test did happen


@pytest.mark.slow
def test_a_remove_killed_right_after_its_lock_write_converges_on_rerun(tmp_path: Path) -> None:
    """SIGKILL at each rename after `remove` wrote the lock (the journal's committed state,
    then system/index.enabled.ttl, then index.installed.ttl): the lock says the packages are
    gone while the reference indexes still list them. The re-run is of a package already
    removed (exit 7), and must still bring both index files in step with the lock."""
    with world(tmp_path, ("folder",)) as w:
        outs = after_lock_iterations(w, "folder", "remove", tmp_path)
    assert len(outs) >= 3, outs  # the committed journal and both index files at least
    renamed = [o.renaming for o in outs]
    assert any(r.endswith("system/index.enabled.ttl") for r in renamed), renamed
    assert any(r.endswith("system/index.installed.ttl") for r in renamed), renamed
    assert any(o.indexes_stale for o in outs), outs  # the case under test did happen
    for o in outs:
        assert o.lock_after_kill == "new", o
        assert o.rerun_exit == 7, o
        assert o.converged, o
