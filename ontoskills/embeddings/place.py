"""Put a model file into the home: hardlink from the cache when possible, else reflink or
copy (the base layer's `filelink.place_file` decides, as it does for package files).

Either way the destination appears atomically (temp name in the same folder + os.replace), so
a reader (an OntoSkills server starting up) sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..filelink import Placed, place_file
from ..fsutil import fsync_dir, make_dirs, sha256_file


def same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def link_or_copy(src: Path, dest: Path, *, link: bool = True) -> str:
    """Place src at dest; returns "linked", "cloned", "copied" or "present" (identical).

    link=False for a user's own folder: a later edit in the home must not reach back into it.
    """
    src = src.resolve()
    make_dirs(dest.parent)
    if dest.is_file() and not dest.is_symlink():
        if same_file(src, dest):
            return "present"
        if dest.stat().st_size == src.stat().st_size and sha256_file(dest) == sha256_file(src):
            return "present"
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    os.unlink(tmp)
    try:
        how = place_file(src, Path(tmp), link=link)
        if how is not Placed.LINKED:  # new bytes: durable before the name points at them
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(dest.parent)
    return how.value
