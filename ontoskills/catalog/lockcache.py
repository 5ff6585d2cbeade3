"""The lock as the catalog reads it, cached as JSON keyed by the lock's sha256.

Parsing a TOML lock with thousands of file entries costs tomllib ~0.3 s; start-up must stay
under a second for the full registry, so an unchanged lock is read back from JSON (~10x
faster). The TOML file stays the only source of truth: any change to it changes the key.

The cache sits in the home, and the lock is what the served files are verified against, so
a planted cache entry must not stand in for the lock (a project lockfile may be reviewed in
git while the home is not): an entry is used only when dumping it canonically gives back the
lock's exact bytes (~25 ms for the full registry's lock, against ~95 ms to parse it);
anything else, a hand-formatted lock included, is parsed from the TOML.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict
from pathlib import Path

from .. import jsonio, lockfile
from ..errors import LockFormatError
from ..fsutil import atomic_write_bytes, remove_file, sha256_bytes
from ..lockfile import LockedFile, LockedModel, LockedPackage, LockedRegistry, Lockfile
from ..registries import RegistryKind

_DIR = "lock-cache"
_VERSION = "3"  # file name suffix: bump when the cached layout changes


def _from_json(raw: dict) -> Lockfile:
    lock = Lockfile()
    for name, r in raw["registries"].items():
        # JSON holds plain words and arrays: the record's own types back (a RegistryKind, a
        # tuple), so a lock from the cache is the lock `lockfile.parse` gives
        kind, keys = RegistryKind(r.pop("kind")), tuple(r.pop("root_keys"))
        lock.registries[name] = LockedRegistry(kind=kind, root_keys=keys, **r)
    for pid, p in raw["packages"].items():
        files = [LockedFile(**f) for f in p.pop("files")]
        lock.packages[pid] = LockedPackage(files=files, **p)
    emb = raw.get("embeddings")
    if emb is not None:
        files = [LockedFile(**f) for f in emb.pop("files")]
        lock.embeddings = LockedModel(files=files, **emb)
    return lock


def load_lock(path: Path, derived_dir: Path) -> tuple[Lockfile, str]:
    """(lock, sha256 of its bytes); a missing lock is an empty one."""
    data = lockfile.read_lock_bytes(path)  # bounded, regular files only
    if data is None:
        return Lockfile(), sha256_bytes(b"")
    digest = sha256_bytes(data)
    cache = derived_dir / _DIR / f"{digest}.v{_VERSION}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
        cached = _from_json(jsonio.loads_derived(cache.read_bytes()))
        if lockfile.dump(cached, path.parent) == data:  # exactly this lock, nothing planted
            return cached, digest
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LockFormatError(
            f"{path}: not valid UTF-8", hint="restore it from version control"
        ) from None
    lock = lockfile.parse(text, path)
    doc = {
        "registries": {name: asdict(r) for name, r in lock.registries.items()},
        "packages": {pid: asdict(p) for pid, p in lock.packages.items()},
        "embeddings": asdict(lock.embeddings) if lock.embeddings else None,
    }
    with contextlib.suppress(OSError):
        atomic_write_bytes(cache, json.dumps(doc, separators=(",", ":")).encode())
        for old in cache.parent.glob("*.json"):
            if old != cache:
                with contextlib.suppress(OSError):
                    remove_file(old)
    return lock, digest
