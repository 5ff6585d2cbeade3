"""Cross-process lock on a home, so concurrent ontoskills runs never interleave writes.

filelock holds an OS lock (fcntl/msvcrt) that the kernel releases when the holder dies, so a
killed process never leaves a lock that blocks forever. Beside it we keep an owner file with
the holder's PID and command, only to tell a waiting user who they are waiting for; an owner
file whose PID is gone is stale and simply overwritten. The owner file is in the home, so it
is untrusted: only an int PID and a plain command word are ever shown.

`hold_lockfile` is the second lock a mutating command takes: one on the lockfile, so two
homes sharing one `--lockfile` never interleave their read-modify-write of it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from .. import envvars, jsonio
from ..errors import BusyError
from ..fsutil import atomic_write_text, check_path, make_dirs, write_target
from ..paths import Home


def default_timeout() -> float:
    """ONTOSKILLS_LOCK_TIMEOUT, read when a lock is taken (never at import: a bad value
    must be a usage error, not a traceback while the CLI loads)."""
    return envvars.get(envvars.LOCK_TIMEOUT)


def owner_file(home: Home) -> Path:
    return home.process_lock.with_suffix(".owner")


_COMMAND_RE = re.compile(r"[a-z][a-z-]{0,31}")


def read_owner(home: Home) -> dict[str, object] | None:
    """{"pid": int, "command": str} of the holder, as far as the (untrusted) file says."""
    try:
        path = owner_file(home)
        if not path.is_file() or path.stat().st_size > 4096:  # no FIFO, device or huge file
            return None
        data = jsonio.loads_derived(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, command = data.get("pid"), data.get("command")
    return {
        "pid": pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else "?",
        # a planted command could carry terminal escapes into a waiting user's terminal
        "command": command
        if isinstance(command, str) and _COMMAND_RE.fullmatch(command)
        else "ontoskills",
    }


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
    make_dirs(home.state_dir)
    check_path(home.process_lock)  # filelock opens it: never through a planted symlink
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


# errno values of a filesystem that cannot flock a folder (NFS maps flock to POSIX locks,
# which need a file open for writing): fall back to a lock file beside the lockfile.
_NO_DIR_LOCK = {errno.EBADF, errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP}


@contextmanager
def hold_lockfile(
    lock_path: Path,
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Serialise every writer of one lockfile, whatever home it runs in.

    Two homes may share one `--lockfile`; each holds only its own home lock, so without this
    both read the lock, add their package, and the second replace drops the first's entry.
    We lock the folder that holds the lockfile (its target's folder when it is a symlink):
    the lockfile itself is replaced by a new inode on every write and may not exist yet,
    while its folder is stable, needs no extra file in a user's project, and its flock is
    released by the kernel when the holder dies.
    """
    timeout = default_timeout() if timeout is None else timeout
    folder = write_target(lock_path).parent
    if folder == lock_path.parent:  # our own default or --lockfile folder: create it
        make_dirs(folder)  # (a symlink's target folder is the user's: never created)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        fcntl = None  # type: ignore[assignment]
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if fcntl else -1
    try:
        if fcntl is not None and _flock(fd, lock_path, timeout, on_wait):
            yield
            return
        # No flock on this platform or filesystem: a filelock beside the lockfile.
        sidecar = filelock.FileLock(
            str(folder / f".{write_target(lock_path).name}.lock"), is_singleton=False
        )
        try:
            sidecar.acquire(timeout=timeout)
        except filelock.Timeout:
            raise _busy_lockfile(lock_path, timeout) from None
        try:
            yield
        finally:
            sidecar.release()
    finally:
        if fd >= 0:
            os.close(fd)  # closing the descriptor releases its flock


def _flock(fd: int, lock_path: Path, timeout: float, on_wait: Callable[[str], None] | None) -> bool:
    """Take an exclusive flock on fd, waiting up to timeout; False when unsupported."""
    import fcntl

    deadline = time.monotonic() + timeout
    delay = 0.02
    waited = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno in _NO_DIR_LOCK:
                return False
            raise
        if not waited and on_wait is not None:
            on_wait(f"waiting for another ontoskills process writing {lock_path}")
        waited = True
        if time.monotonic() >= deadline:
            raise _busy_lockfile(lock_path, timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def _busy_lockfile(lock_path: Path, timeout: float) -> BusyError:
    return BusyError(
        f"{lock_path} is being written by another ontoskills process for more than {timeout:.0f}s",
        hint="wait for it to finish (another home may share this --lockfile); "
        "ONTOSKILLS_LOCK_TIMEOUT sets the wait",
    )
