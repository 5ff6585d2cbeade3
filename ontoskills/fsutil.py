"""Filesystem primitives with crash-safety guarantees: atomic writes, hashing, removal.

Guarded roots. A home and a cache are folders ontoskills owns, and everything in them is
untrusted input: anyone who can write there can plant a symlink (`.staging -> ~/src`,
`state/derived -> /etc`) that turns our next write, rename or rm -rf into one outside.
Constructing a `paths.Home` or `paths.Cache` registers its root here (`guard_root`), and every
create / replace / delete primitive below first calls `check_path`, which refuses a path under
a guarded root when a folder between the root and the path is a symlink (UnsafePathError,
exit 4), before anything is touched. Code working under a home uses these primitives, or calls
`check_path` itself before another API (os.replace of a package folder, a lock file). This is
a check against planted links, not against a concurrent attacker racing us inside the home.

Files the user owns (the lockfile, config.toml, MCP client configs) are different: a symlink
there is the user's choice (dotfiles, a lock shared between checkouts), so
`atomic_write_through` replaces the link's target atomically and keeps the link and the
target's permissions.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from .errors import UnsafePathError

CHUNK = 1024 * 1024

# Absolute, normalised roots of the homes and caches this process works in.
_GUARDED: set[str] = set()


def guard_root(root: Path) -> None:
    """Treat everything under `root` as ours: folders inside it must be real folders."""
    _GUARDED.add(os.path.abspath(root))


def _guarded(path: Path) -> tuple[str, list[str]] | None:
    """(the deepest guarded root holding path, the components below it) or None.

    Walks the path as given (not normalised): a root given as `/x/../home` still matches, and
    a `..` below a root is seen, never folded away (the OS would follow a link before it)."""
    if not _GUARDED:
        return None
    raw = Path(path).absolute()
    parts = raw.parts
    for depth in range(len(parts), 0, -1):
        root = os.path.abspath(Path(*parts[:depth]))
        if root in _GUARDED:
            below = list(parts[depth:])
            if ".." in below:  # never produced by our code: refuse, do not guess
                raise UnsafePathError(f"unsafe path {str(path)!r}: '..' under {root}")
            return root, below
    return None


def check_path(path: Path, *, leaf: bool = True) -> Path:
    """Refuse `path` when it lies under a guarded root and a folder between the root and it
    is a symlink; with leaf=True the path itself must not be one either (leaf=False for a
    file we replace or unlink: both act on a link itself, never on what it points to).
    Missing components are fine: they are created as real folders by `make_dirs`."""
    found = _guarded(path)
    if found is None:
        return path
    root, parts = found
    current = root
    for part in parts if leaf else parts[:-1]:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            break  # nothing further exists to follow
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePathError(
                f"{current} is a symlink; ontoskills only writes into real folders of {root}",
                hint=f"remove the symlink ({current}) and run the command again",
            )
    return path


def make_dirs(path: Path) -> Path:
    """mkdir -p that refuses to create anything through a symlinked folder of a guarded root."""
    check_path(path)
    path.mkdir(parents=True, exist_ok=True)
    return check_path(path)  # a link swapped in between the two checks is refused too


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not supported on every platform/filesystem
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write via temp file + fsync + os.replace: readers see the old or the new file.

    A symlink at `path` itself is replaced (never followed); a symlinked folder above it
    inside a guarded root is refused."""
    check_path(path, leaf=False)
    make_dirs(path.parent)
    _replace_with(path, data, mode)


def _replace_with(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_target(path: Path) -> Path:
    """Where a write to the user's file `path` lands: the file a symlink at path resolves to
    (kept a link), else path itself."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else path


def atomic_write_through(path: Path, data: bytes, default_mode: int = 0o644) -> Path:
    """Atomically replace a file the user owns, through a symlink at `path` if there is one.

    The link stays a link; its target is replaced (temp file + fsync + rename in the
    target's folder) and keeps its permissions. Returns the file actually written."""
    check_path(path, leaf=False)
    target = write_target(path)
    if target == path:
        make_dirs(path.parent)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = default_mode
    _replace_with(target, data, mode)
    return target


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def is_executable(path: Path) -> bool:
    return bool(os.stat(path).st_mode & stat.S_IXUSR)


def set_executable(path: Path, executable: bool) -> None:
    os.chmod(path, 0o755 if executable else 0o644)


def remove_file(path: Path) -> None:
    """unlink (missing is fine); a symlink is removed itself, never what it points to."""
    check_path(path, leaf=False)
    path.unlink(missing_ok=True)


def remove_tree(path: Path) -> None:
    """rm -rf that never follows symlinks out of the tree and tolerates read-only files."""
    check_path(path, leaf=False)
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return
    if not path.exists():
        return

    def _retry(func, p, _exc):  # type: ignore[no-untyped-def]
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_retry)
    else:
        shutil.rmtree(path, onerror=_retry)


def walk_files(root: Path) -> list[str]:
    """Sorted POSIX relative paths of regular files under root (symlinks are not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in filenames:
            p = base / name
            if p.is_file() and not p.is_symlink():
                out.append(p.relative_to(root).as_posix())
    return sorted(out)
