"""Cross-process lock on a home, so concurrent ontoskills runs never interleave writes.

filelock holds an OS lock (fcntl/msvcrt) that the kernel releases when the holder dies, so a
killed process never leaves a lock that blocks forever. Beside it we keep an owner file with
the holder's PID and command, only to tell a waiting user who they are waiting for; an owner
file whose PID is gone is stale and simply overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from .. import envvars
from ..errors import BusyError
from ..fsutil import atomic_write_text
from ..paths import Home


def default_timeout() -> float:
    """ONTOSKILLS_LOCK_TIMEOUT, read when a lock is taken (never at import: a bad value
    must be a usage error, not a traceback while the CLI loads)."""
    return envvars.get(envvars.LOCK_TIMEOUT)


def owner_file(home: Home) -> Path:
    return home.process_lock.with_suffix(".owner")


def read_owner(home: Home) -> dict[str, object] | None:
    try:
        data = json.loads(owner_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_locked(home: Home) -> bool:
    """True when another process currently holds the home lock."""
    if not home.process_lock.exists():
        return False
    probe = filelock.FileLock(str(home.process_lock), timeout=0, is_singleton=False)
    try:
        probe.acquire(timeout=0)
    except filelock.Timeout:
        return True
    probe.release()
    return False


@contextmanager
def hold(
    home: Home,
    command: str,
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the home lock for the duration of the block."""
    timeout = default_timeout() if timeout is None else timeout
    home.state_dir.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(home.process_lock), is_singleton=False)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        owner = read_owner(home) or {}
        who = f"pid {owner.get('pid', '?')} ({owner.get('command', 'ontoskills')})"
        if on_wait is not None:
            on_wait(f"waiting for another ontoskills process, {who}, holding {home.process_lock}")
        try:
            lock.acquire(timeout=timeout)
        except filelock.Timeout:
            raise BusyError(
                f"{home.root} is locked by {who} for more than {timeout:.0f}s",
                hint="wait for it to finish; a killed holder releases the lock automatically "
                "(ONTOSKILLS_LOCK_TIMEOUT sets the wait)",
            ) from None
    try:
        atomic_write_text(
            owner_file(home), json.dumps({"pid": os.getpid(), "command": command}) + "\n"
        )
        yield
    finally:
        with contextlib.suppress(OSError):
            owner_file(home).unlink()
        lock.release()
