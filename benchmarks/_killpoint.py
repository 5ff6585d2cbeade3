"""Run the ontoskills CLI and SIGKILL it at its N-th os.replace (for benchmarks/kill_loop.py).

    ONTOSKILLS_BENCH_KILL_AT=N python benchmarks/_killpoint.py install a/b
    ONTOSKILLS_BENCH_COUNT=FILE python benchmarks/_killpoint.py install a/b  # count them
    ONTOSKILLS_BENCH_TRACE=FILE ...  # and write each rename's destination, one per line

A random delay rarely lands inside a transaction's swap (it lasts milliseconds), so a kill
loop of random delays almost never leaves a journal behind. Killing at a chosen rename does:
every os.replace of a run (atomic writes, the folder moves of the swap) is a kill point, and
the kill lands before that rename happens, exactly as a SIGKILL between two syscalls would.
The cache's renames are not counted: one per stored blob and check verdict, they would
drown the home's few (a kill there leaves a temp file in cache/tmp, never a partial blob;
tests/install/test_store_links.py kills installs at random points for those).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_real_replace = os.replace
_calls = 0
_kill_at = int(os.environ.get("ONTOSKILLS_BENCH_KILL_AT", "0"))
_count_file = os.environ.get("ONTOSKILLS_BENCH_COUNT")
_trace_file = os.environ.get("ONTOSKILLS_BENCH_TRACE")
_trace: list[str] = []


_cache = os.path.abspath(os.environ.get("ONTOSKILLS_CACHE_DIR") or "/nonexistent") + os.sep


def _replace(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
    global _calls
    if os.path.abspath(dst).startswith(_cache):
        return _real_replace(src, dst, *args, **kwargs)
    _calls += 1
    if _calls == _kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    _trace.append(os.fspath(dst))
    return _real_replace(src, dst, *args, **kwargs)


def _write_count() -> None:
    if _count_file:
        Path(_count_file).write_text(str(_calls))
    if _trace_file:  # which rename is which: kill_loop finds the lock write in it
        Path(_trace_file).write_text("".join(f"{d}\n" for d in _trace))


if __name__ == "__main__":
    os.replace = _replace  # pathlib and tempfile call os.replace through the module too
    atexit.register(_write_count)
    from ontoskills.cli import main

    main()
