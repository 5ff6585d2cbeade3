"""The derived search index on disk: start-up reads this instead of re-parsing all Turtle.

Keyed by a digest of everything the catalog depends on (the lock's bytes, which files failed
verification, the local skills' stats, the encoder used for missing vectors), so a changed
lock or tree simply misses and rebuilds. Stored as JSON + a .npy matrix (no pickle).

It lives in the home, so it is read as untrusted: a record whose folder is outside the
home's `ontologies/` or whose module/asset paths are not safe relative paths makes the whole
snapshot a miss (rebuilt from the verified tree), so a planted snapshot cannot point `show`
or the MCP tool at files elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UnsafePathError
from ..fsutil import atomic_write_bytes, remove_file
from ..safety import check_relpath
from .model import CatalogData, SkillRecord

FORMAT = 5  # bump when the record layout, the tokenizer or how modules are read changes
_DIR = "search-index"


def snapshot_key(*parts: str) -> str:
    h = hashlib.sha256(f"format={FORMAT}".encode())
    for part in parts:
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:32]


def _paths(derived_dir: Path, key: str) -> tuple[Path, Path, Path]:
    folder = derived_dir / _DIR
    return (
        folder / f"index-{key}.json",
        folder / f"index-{key}.npy",
        folder / f"index-{key}.bm25.npz",
    )


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


def load_snapshot(derived_dir: Path, key: str, *, tree: Path) -> CatalogData | None:
    """The stored catalog for key, or None (absent, damaged, or naming paths outside
    `tree`, the home's ontologies folder): the caller rebuilds."""
    meta_path, vec_path, bm25_path = _paths(derived_dir, key)
    try:
        meta = json.loads(meta_path.read_bytes())
        vectors = np.load(vec_path, allow_pickle=False)
        if meta.get("format") != FORMAT or meta.get("key") != key:
            return None
        owner = np.asarray(meta["vector_owner"], dtype=np.int32)
        records = [SkillRecord.from_json(r) for r in meta["records"]]
        if not all(_confined(r, tree) for r in records):
            return None
        if vectors.shape[0] != owner.shape[0] or len(meta["vector_text"]) != owner.shape[0]:
            return None
        return CatalogData(
            records=records,
            vectors=vectors.astype(np.float32, copy=False),
            vector_owner=owner,
            vector_text=list(meta["vector_text"]),
            vector_model=meta.get("vector_model"),
            problems=list(meta["problems"]),
            schema=dict(meta["schema"]),
            derived_vectors=int(meta.get("derived_vectors", 0)),
            bm25_terms=list(meta["bm25_terms"]),
            bm25_arrays=_load_npz(bm25_path),
        )
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None  # absent or damaged: rebuild


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def save_snapshot(derived_dir: Path, key: str, data: CatalogData) -> None:
    meta_path, vec_path, bm25_path = _paths(derived_dir, key)
    meta = {
        "format": FORMAT,
        "key": key,
        "records": [r.to_json() for r in data.records],
        "vector_owner": data.vector_owner.tolist(),
        "vector_text": data.vector_text,
        "vector_model": data.vector_model,
        "problems": data.problems,
        "schema": data.schema,
        "derived_vectors": data.derived_vectors,
        "bm25_terms": data.bm25_terms or [],
    }
    buf = io.BytesIO()
    np.save(buf, data.vectors, allow_pickle=False)
    try:
        # Matrix first: a reader that finds the JSON always finds its matrix.
        atomic_write_bytes(vec_path, buf.getvalue())
        bm25 = io.BytesIO()
        # Any: savez's stubs type **kwds as if a name could be its allow_pickle flag.
        arrays: dict[str, Any] = dict(data.bm25_arrays or {})
        np.savez(bm25, **arrays)
        atomic_write_bytes(bm25_path, bm25.getvalue())
        atomic_write_bytes(meta_path, json.dumps(meta, separators=(",", ":")).encode())
    except OSError:
        return  # read-only home: serve from memory, rebuild next time
    for old in meta_path.parent.glob("index-*"):
        if old.name not in (meta_path.name, vec_path.name, bm25_path.name):
            with contextlib.suppress(OSError):
                remove_file(old)
