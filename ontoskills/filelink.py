"""Put one file at a new name: hardlink, else reflink, else copy. The one place that decides
(package files from the blob store into a home, the embedding model from the hub cache).

pnpm and uv do the same: a hardlink costs no bytes and no write, so ten homes holding the same
packages cost one copy. It is refused across filesystems (EXDEV), on filesystems without
links or past their link count (EPERM, EMLINK), and by `fs.protected_hardlinks`; then a
reflink (FICLONE: btrfs, XFS, bcachefs; shared blocks, but an edit stays in its own file) is
tried, then a plain copy. Callers that must never share an inode (a user's own folder, an
executable whose mode would be shared) ask for `link=False`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path

from .choices import Choice


class Placed(Choice):
    """How a file was placed: it shares the source's inode, its blocks, or neither."""

    LINKED = "linked"
    CLONED = "cloned"
    COPIED = "copied"


# Why os.link can refuse while a copy would work: another filesystem, links unsupported or
# forbidden (protected_hardlinks, some FUSE and network filesystems), too many links to one
# inode (65,000 on ext4). Anything else (disk full, a read-only home) is the caller's error.
_NO_LINK = frozenset(
    {errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}
    | {errno.ENOSYS, errno.EINVAL}
)
# linux/fs.h: _IOW(0x94, 9, int). Other systems have no reflink ioctl Python can reach.
_FICLONE = 0x40049409


def place_file(src: Path, dest: Path, *, link: bool = True) -> Placed:
    """Create `dest` (it must not exist: a link never replaces anything) with `src`'s bytes.

    `src` itself must be a regular file: a symlink is never followed (the link is made to the
    link, the copy refused), so a name planted in a cache cannot pull another file in."""
    if link:
        try:
            os.link(src, dest, follow_symlinks=False)
            return Placed.LINKED
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
        except NotImplementedError:  # no linkat (follow_symlinks=False) on this platform
            pass
    return _clone_or_copy(src, dest)


def hash_regular(path: Path) -> tuple[str, int]:
    """sha256 and size of a regular file, opened without following a link or blocking on a
    FIFO; ("", 0) for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return "", 0
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "", 0
        digest, size = hashlib.sha256(), 0
        for chunk in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _clone_or_copy(src: Path, dest: Path) -> Placed:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd_in = os.open(src, flags)
    try:
        fd_out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            if _clone(fd_in, fd_out):
                return Placed.CLONED
            with open(fd_in, "rb", closefd=False) as fin, open(fd_out, "wb", closefd=False) as out:
                shutil.copyfileobj(fin, out, 1024 * 1024)
            return Placed.COPIED
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(dest)
            raise
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _clone(fd_in: int, fd_out: int) -> bool:
    """Reflink fd_in's blocks into the empty fd_out; False where the filesystem cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import fcntl

    try:
        fcntl.ioctl(fd_out, _FICLONE, fd_in)
    except OSError:  # EOPNOTSUPP (ext4, tmpfs), EXDEV, EINVAL: copy instead
        return False
    return True
