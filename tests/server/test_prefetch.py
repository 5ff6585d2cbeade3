"""`server/prefetch.py`: the service `serve` starts building before it imports the SDK."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from ontoskills.errors import LockFormatError
from ontoskills.server.prefetch import Prefetch


def test_the_first_get_takes_the_prefetched_build_later_ones_build_again() -> None:
    started = threading.Event()
    built: list[str] = []

    def build() -> int:
        built.append(threading.current_thread().name)
        started.set()
        return len(built)

    early = Prefetch(build)
    assert started.wait(10)  # running before anyone asked
    assert early.get() == 1 and built == ["ontoskills-catalog"]
    assert early.get() == 2  # the server retries a load: a fresh build, in the caller
    assert built[1] == threading.current_thread().name


def test_a_failed_prefetch_is_raised_to_the_loader_then_retried() -> None:
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise LockFormatError("malformed lock")
        return "service"

    early = Prefetch(build)
    with pytest.raises(LockFormatError, match="malformed lock"):
        early.get()
    assert early.get() == "service"


def test_importing_it_loads_neither_the_sdk_nor_the_search_stack() -> None:
    code = (
        "import sys, ontoskills.server.prefetch; "
        "print(sorted(m for m in ('mcp', 'numpy', 'pyoxigraph', 'ontoskills.search.service') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out
