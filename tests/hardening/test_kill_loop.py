"""A handful of benchmarks/kill_loop.py iterations in CI: SIGKILL during install, update, ci
and remove from a folder registry, then doctor and a re-run that must converge to the exact
tree and lock of an uninterrupted run. The benchmark runs >= 50 over folder, HTTP and git."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.kill_loop import OPS, one_iteration, world


@pytest.mark.slow
def test_kill_anywhere_then_rerun_converges(tmp_path: Path) -> None:
    rng = random.Random(7)
    with world(tmp_path, ("folder",)) as w:
        for op in OPS:
            out = one_iteration(w, "folder", op, rng, tmp_path / "run")
            assert out.lock_after_kill in ("old", "new"), (op, out)
            assert "Traceback" not in str(out)
            assert out.converged, (op, out)
