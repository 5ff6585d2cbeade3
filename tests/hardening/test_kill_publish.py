"""A handful of benchmarks/kill_publish.py iterations in CI: SIGKILL `ontoskills publish` at a
random moment, re-run it, then `registry verify` passes and the registry (index.json, the
package's files, git HEAD tree, clean work tree) equals an uninterrupted publish; also into a
`hostile` git registry whose .gitattributes/.gitignore/autocrlf would rewrite or drop files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.kill_publish import one_iteration, world


@pytest.mark.slow
def test_kill_publish_then_rerun_converges(tmp_path: Path) -> None:
    rng = random.Random(11)
    with world(tmp_path, ("git", "folder", "hostile")) as w:
        for kind in ("git", "folder", "hostile", "folder"):
            out = one_iteration(w, kind, rng, tmp_path / "run")
            assert out.converged, (kind, out)
