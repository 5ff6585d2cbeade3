"""What `serve` starts before it imports the MCP SDK: the search service, built in a thread,
and one malloc arena for the process.

Import-light on purpose (no SDK, no numpy or pyoxigraph until the thread runs): over HTTP
the verb starts the build first and imports the SDK while it runs (~0.6 s of CPU); over stdio
it answers `initialize` first (early.py) and starts the build once the SDK is in, so the
client's next requests do not wait for the two to share the GIL. Verification
hashes every installed file and reads the snapshot, which release the GIL, so on two cores
the first answer comes ~0.1-0.2 s sooner (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from ..catalog.verify import VerifyMode
    from ..config import Config
    from ..paths import Home
    from ..search.service import SkillService

T = TypeVar("T")
M_ARENA_MAX = -8  # glibc malloc.h


def one_malloc_arena() -> None:
    """One glibc malloc arena for the whole server. Calls run in worker threads and glibc
    gives threads arenas of their own, each keeping the memory freed in it: over 3,000 calls
    from 4 concurrent tasks the server grew 151 -> 173 MB with the default, 145 -> 154 MB with
    one arena (docs/PERFORMANCE.md). The GIL serialises our allocations anyway. Not glibc
    (macOS, musl): nothing to do. Call it before any thread allocates."""
    import ctypes

    with contextlib.suppress(AttributeError, OSError, TypeError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)


class Prefetch(Generic[T]):
    """`build()` started in a thread at once; the server's first call to `get` (in its worker
    thread, once the transport is up) takes that result or its exception, later calls (the
    server retries a failed load) build again."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._result: T | None = None
        self._error: BaseException | None = None
        self._used = False
        self._thread = threading.Thread(target=self._run, name="ontoskills-catalog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._build()
        except BaseException as exc:  # handed to the server's loader, which reports it
            self._error = exc

    def get(self) -> T:
        if self._used:
            return self._build()
        self._used = True
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(T, self._result)  # set: _run did not fail


def prefetch_service(
    home: Home, lockfile: Path, config: Config, verify: VerifyMode
) -> Prefetch[SkillService]:
    """The search service `serve` answers from, loading from now (its snapshot rebuilt by a
    child process when stale, so the server's own memory stays small)."""

    def build() -> SkillService:
        from ..search.service import SkillService

        return SkillService(home, lockfile, config, verify=verify, build_in_child=True)

    return Prefetch(build)
