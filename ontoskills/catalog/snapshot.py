"""The derived search index on disk: start-up reads this instead of re-parsing all Turtle.

Keyed by a digest of everything the catalog depends on (the lock's bytes, which files failed
verification, the local skills' stats, the encoder used for missing vectors), so a changed
lock or tree simply misses and rebuilds. Stored as two files, no pickle:

- `index-KEY.arrays`: every NumPy array (intent vectors and their owners, the BM25
  postings) as raw little-endian bytes, each at a 64-byte aligned offset. It is memory-mapped
  when read back, so a reload (one per install, in `serve`) puts none of it on the heap: the
  pages are the file's, and go when the last view using them does (docs/PERFORMANCE.md).
- `index-KEY.json`: the records, texts and the arrays' layout (dtype, shape, offset) and the
  arrays file's size. Written last: a reader that finds the JSON finds its arrays.

Every file is replaced atomically (a new inode), never rewritten in place, so a snapshot in
use keeps the bytes it mapped while the next one is saved or the old one deleted. (Another
process truncating a mapped file in place would make the server's next read of it fault:
whoever can write `state/derived` can already change what search says, docs/RELIABILITY.md.)

It lives in the home, so it is read as untrusted: a record whose folder is outside the
home's `ontologies/` or whose module/asset paths are not safe relative paths makes the whole
snapshot a miss (rebuilt from the verified tree), so a planted snapshot cannot point `show`
or the MCP tool at files elsewhere; so does a layout naming another dtype than the four we
write, an array outside the file, a file of another size than the JSON says, anything but a
regular file, or vectors whose owners are not records.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import mmap
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .. import jsonio
from ..asciinum import json_uint
from ..errors import UnsafePathError
from ..fsutil import atomic_write_bytes, remove_file
from ..safety import check_relpath
from .model import VIEW_INTENTS, CatalogData, SkillRecord

FORMAT = 8  # bump when the record layout, the tokenizer or how modules are read changes
_DIR = "search-index"
_ALIGN = 64  # each array's offset: aligned loads for every dtype (and cache lines)
_DTYPES = frozenset({"<f4", "<i4", "<i8", "|b1"})  # all we write; nothing else is read
_BM25 = "bm25."  # prefix of the BM25 arrays' names in the layout
_INTENTS = "intents."  # ... and of the intents' term ids (search/ranking.IntentIndex)
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | os.O_CLOEXEC


def snapshot_key(*parts: str) -> str:
    h = hashlib.sha256(f"format={FORMAT}".encode())
    for part in parts:
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:32]


def _count(value: object) -> int:
    count = json_uint(value)
    if count is None:  # a hand-edited snapshot: rebuilt, like any other bad field
        raise ValueError("derived_vectors")
    return count


def _paths(derived_dir: Path, key: str) -> tuple[Path, Path]:
    folder = derived_dir / _DIR
    return folder / f"index-{key}.json", folder / f"index-{key}.arrays"


def _confined(record: SkillRecord, tree: Path) -> bool:
    """Does every path of the record stay inside the installed tree?"""
    root = Path(record.root)
    if not root.is_absolute() or ".." in root.parts or tree not in root.parents:
        return False
    try:
        for rel in [record.main_module, *record.modules, *record.assets]:
            check_relpath(rel, "snapshot path")
    except UnsafePathError:
        return False
    return True


def _pack(arrays: dict[str, np.ndarray]) -> tuple[bytes, dict[str, list[Any]]]:
    """The arrays as one blob and their layout: name -> [dtype, shape, offset]."""
    chunks: list[bytes] = []
    layout: dict[str, list[Any]] = {}
    pos = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        if a.dtype.str not in _DTYPES:
            raise TypeError(f"snapshot array {name} has dtype {a.dtype.str}")
        data = a.tobytes()
        layout[name] = [a.dtype.str, list(a.shape), pos]
        chunks += [data, bytes(-len(data) % _ALIGN)]
        pos += len(data) + (-len(data) % _ALIGN)
    return b"".join(chunks), layout


def _map(path: Path, size: Any) -> mmap.mmap | bytes:
    """The arrays file, mapped read-only; ValueError unless it is a regular file (not a
    symlink, FIFO or device) of exactly `size` bytes (a truncated or swapped file)."""
    fd = os.open(path, _OPEN)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or type(size) is not int or st.st_size != size:
            raise ValueError("not the arrays file the snapshot names")
        # An empty mapping is an error: no arrays at all (an empty home) is b"".
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else b""
    finally:
        os.close(fd)


def _view(buf: mmap.mmap | bytes, entry: Any) -> np.ndarray:
    """One array of the layout, as a read-only view of `buf`; ValueError if the entry is not
    [one of our dtypes, a shape of non-negative ints, an aligned offset] inside the buffer."""
    if not isinstance(entry, list) or len(entry) != 3:
        raise ValueError("bad array entry")
    dt, shape, offset = entry
    if (
        dt not in _DTYPES
        or not isinstance(shape, list)
        or len(shape) > 3
        or not all(type(n) is int and n >= 0 for n in shape)
        or type(offset) is not int
        or offset < 0
        or offset % _ALIGN
    ):
        raise ValueError("bad array entry")
    dtype = np.dtype(dt)
    count = math.prod(shape)
    if offset + count * dtype.itemsize > len(buf):
        raise ValueError("array outside the file")
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=count, offset=offset).reshape(shape)


def load_snapshot(derived_dir: Path, key: str, *, tree: Path) -> CatalogData | None:
    """The stored catalog for key, or None (absent, damaged, or naming paths outside
    `tree`, the home's ontologies folder): the caller rebuilds."""
    meta_path, arrays_path = _paths(derived_dir, key)
    try:
        meta = jsonio.loads_derived(meta_path.read_bytes())
        if meta.get("format") != FORMAT or meta.get("key") != key:
            return None
        layout = meta["arrays"]
        if not isinstance(layout, dict):
            return None
        buf = _map(arrays_path, meta["arrays_size"])
        arrays = {name: _view(buf, entry) for name, entry in layout.items()}
        vectors, owner = arrays.pop("vectors"), arrays.pop("vector_owner")
        views = arrays.pop("views")
        records = [SkillRecord.from_json(r) for r in meta["records"]]
        if not all(_confined(r, tree) for r in records):
            return None
        n = owner.shape[0]
        if (
            vectors.ndim != 2
            or owner.ndim != 1
            or vectors.shape[0] != n
            or len(meta["vector_text"]) != n
            or vectors.dtype != np.float32
            or owner.dtype != np.int32
            or (n and (int(owner.min()) < 0 or int(owner.max()) >= len(records)))
            or not _views_fit(views, len(records))
        ):
            return None
        bm25 = {k[len(_BM25) :]: v for k, v in arrays.items() if k.startswith(_BM25)}
        intents = {k[len(_INTENTS) :]: v for k, v in arrays.items() if k.startswith(_INTENTS)}
        return CatalogData(
            records=records,
            vectors=vectors,
            vector_owner=owner,
            vector_text=list(meta["vector_text"]),
            vector_model=meta.get("vector_model"),
            problems=list(meta["problems"]),
            schema=dict(meta["schema"]),
            derived_vectors=_count(meta.get("derived_vectors", 0)),
            views=views,
            bm25_terms=list(meta["bm25_terms"]),
            bm25_arrays=bm25,
            intent_terms=list(meta["intent_terms"]),
            intent_arrays=intents,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # absent or damaged: rebuild


def _views_fit(views: np.ndarray, n_records: int) -> bool:
    """Whole-skill vectors: one pair per record, or none at all (no encoder)."""
    return (
        views.ndim == 3
        and views.dtype == np.float32
        and views.shape[1] == len(VIEW_INTENTS)
        and views.shape[0] in (0, n_records)
    )


def save_snapshot(derived_dir: Path, key: str, data: CatalogData) -> None:
    meta_path, arrays_path = _paths(derived_dir, key)
    # Rows grouped by owner (stable: a skill's intents keep their order), the order search
    # ranks them in (search/semantic.py), so the mapped matrix is used without a copy.
    order = np.argsort(data.vector_owner, kind="stable")
    arrays = {
        "vectors": data.vectors[order].astype(np.float32, copy=False),
        "vector_owner": data.vector_owner[order].astype(np.int32, copy=False),
        "views": data.views.astype(np.float32, copy=False),
        **{_BM25 + k: v for k, v in (data.bm25_arrays or {}).items()},
        **{_INTENTS + k: v for k, v in (data.intent_arrays or {}).items()},
    }
    blob, layout = _pack(arrays)
    meta = {
        "format": FORMAT,
        "key": key,
        "arrays": layout,
        "arrays_size": len(blob),
        "records": [r.to_json() for r in data.records],
        "vector_text": [data.vector_text[i] for i in order],
        "vector_model": data.vector_model,
        "problems": data.problems,
        "schema": data.schema,
        "derived_vectors": data.derived_vectors,
        "bm25_terms": data.bm25_terms or [],
        "intent_terms": data.intent_terms or [],
    }
    try:
        # Arrays first, JSON last: a reader that finds the JSON always finds its arrays.
        atomic_write_bytes(arrays_path, blob)
        atomic_write_bytes(meta_path, json.dumps(meta, separators=(",", ":")).encode())
    except OSError:
        return  # read-only home: serve from memory, rebuild next time
    for old in meta_path.parent.glob("index-*"):
        if old.name not in (meta_path.name, arrays_path.name):
            with contextlib.suppress(OSError):
                remove_file(old)  # unlinked: a view still mapping it keeps its inode
