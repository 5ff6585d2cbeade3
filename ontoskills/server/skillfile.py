"""One file of a served `skill://` directory, and the verified read of an installed one.

Every installed file is read back against the digest and size the listing gave for it (the
lock's): a file changed, gone, swapped for a symlink, a FIFO or a device, or reached through a
folder swapped for a symlink is refused (`ChangedError`), never served.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import OntoskillsError, UnsafePathError
from ..fsutil import check_path


class ChangedError(OntoskillsError):
    """A file's bytes no longer match the digest listed for it."""


@dataclass(frozen=True)
class SkillFile:
    path: str  # relative to the skill's root (decoded; the URI quotes it)
    sha256: str
    size: int
    mime: str
    disk: Path | None  # the installed file; None when generated


def read_installed(disk: Path, size: int) -> bytes:
    """A regular file's bytes (no symlink), at most `size` + 1 of them."""
    # A folder of the home swapped for a symlink (to a copy elsewhere, or anywhere) is not
    # the installed tree: refused like a symlinked file (check_path walks the folders below
    # the home; O_NOFOLLOW covers the file itself).
    check_path(disk)
    # O_NONBLOCK: a FIFO planted in place of a file would block open() until a writer came,
    # holding the request (and its worker thread) forever; for a regular file it is a no-op.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(disk, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ChangedError(f"{disk} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(size + 1)
    finally:
        os.close(fd)


def read_verified(f: SkillFile) -> bytes:
    """An installed file's bytes, which must match the digest and size listed for it."""
    assert f.disk is not None
    try:
        data = read_installed(f.disk, f.size)
    except FileNotFoundError:
        raise ChangedError(
            f"{f.path}: the installed file is gone", hint="run `ontoskills doctor`"
        ) from None
    except OSError as exc:  # a symlink put in its place (O_NOFOLLOW), permissions, ...
        raise ChangedError(
            f"{f.path}: cannot read the installed file ({exc.strerror})",
            hint="run `ontoskills doctor`",
        ) from None
    except UnsafePathError:  # a folder on its way is a symlink: the path is not named
        raise ChangedError(
            f"{f.path}: a folder of the installed tree was replaced by a symlink; not served",
            hint="run `ontoskills doctor`",
        ) from None
    if len(data) != f.size or hashlib.sha256(data).hexdigest() != f.sha256:
        raise ChangedError(
            f"{f.path} changed on disk since it was installed; not served",
            hint="run `ontoskills doctor` (or reinstall the package)",
        )
    return data
