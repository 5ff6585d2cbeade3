"""The cache folder as ontoskills' own: its CACHEDIR.TAG, and `cache clean`.

A cache folder ontoskills creates is tagged (backup tools skip it, and `clean` knows it is
ours); a folder the user named, or one an older version made, is judged by its entries:
`clean` removes only the names `paths.Cache.MANAGED` lists, and refuses a folder holding
anything else without our tag.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from .errors import UsageError
from .fsutil import atomic_write_bytes, make_dirs
from .ownership import prune

# The Cache Directory Tagging Specification (https://bford.info/cachedir/): backup tools skip
# a folder holding it, and `cache clean` knows the folder is one ontoskills created.
CACHE_TAG = "CACHEDIR.TAG"
_TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
_TAG_BYTES = (
    _TAG_SIGNATURE + b"\n# This file is a cache directory tag created by ontoskills.\n"
    b"# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


def ensure_root(root: Path) -> None:
    """Create the cache folder tagged as ours; a folder that exists is left untagged
    (ontoskills did not create it; `clean` judges it by its entries)."""
    if os.path.isdir(root):
        return
    make_dirs(root.parent)
    try:
        os.mkdir(root)
    except FileExistsError:
        return
    atomic_write_bytes(root / CACHE_TAG, _TAG_BYTES)


def tagged(root: Path) -> bool:
    """Whether the cache folder holds the tag ontoskills wrote when it created it."""
    tag = root / CACHE_TAG
    try:
        if not stat.S_ISREG(os.lstat(tag).st_mode):
            return False
        with open(tag, "rb") as fh:
            return fh.read(len(_TAG_SIGNATURE)) == _TAG_SIGNATURE
    except OSError:
        return False


def clean(root: Path, managed: tuple[str, ...]) -> int:
    """Delete what ontoskills cached (the `managed` folders; the cache folder itself only
    when it was ours alone) and return the bytes freed. A folder holding anything else
    is ours only with our tag (then the rest is kept); without it (a folder the user
    named, or a cache an older version made, which holds only managed names) any other
    entry means it is not a cache: refused, nothing deleted."""
    ours = tagged(root)
    others = sorted(e.name for e in os.scandir(root) if e.name not in (*managed, CACHE_TAG))
    if others and not ours:
        raise UsageError(
            f"cache folder {root} holds {others[0]!r}, which ontoskills did not write",
            hint="point ONTOSKILLS_CACHE_DIR at a folder of its own; nothing was deleted",
        )
    freed = sum(_size(root / name) for name in managed)
    prune(root, managed, tagged=ours, tag=CACHE_TAG)
    return freed


def _size(path: Path) -> int:
    """Bytes deleting the regular files under path frees (links not followed): a blob that
    homes hardlink (st_nlink > 1) lives on in them, so it frees nothing."""
    if os.path.islink(path):
        return 0
    total = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                total += st.st_size if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 else 0
    return total
