"""The digests of a skill's generated files (SKILL.md and the part files it links), cached.

Computing them needs the skill's context (a Turtle parse, ~30 ms) and a render, so
`server/skillfs.py` keeps them per skill: in memory (the last `_MANIFESTS` skills) and under
`state/derived/skills-ext/`, keyed by `skill_fingerprint`, a digest of every input (the
renderer's version, the record, the frontmatter, the installed files' digests): a listing
pays once per change, and a stale entry is never a hit. A file that is not ours to trust
(unreadable, not the shape we write, SKILL.md not first) is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import jsonio
from ..catalog.skilldir import SKILL_MD, renderer_version
from ..fsutil import atomic_write_bytes, remove_file
from .skillfile import SkillFile

if TYPE_CHECKING:
    from ..catalog.model import SkillRecord

# path, sha256, size of each generated file, SKILL.md first
Digests = list[tuple[str, str, int]]

_MANIFESTS = 4096  # skills whose generated digests we keep in memory (~2 KB each)
_DIGEST_DIR = "skills-ext"


class DigestCache:
    """Generated files' digests per skill key, for one fingerprint each (thread-safe)."""

    def __init__(self, derived_dir: Path) -> None:
        self.folder = derived_dir / _DIGEST_DIR
        self._lock = threading.Lock()
        self._manifests: OrderedDict[str, tuple[str, Digests]] = OrderedDict()

    def _cache_file(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def get(self, key: str, fingerprint: str) -> Digests | None:
        """The digests listed for `key` when they were computed for `fingerprint`."""
        with self._lock:
            found = self._manifests.get(key)
        if found is not None and found[0] == fingerprint:
            return found[1]
        with contextlib.suppress(OSError, ValueError):
            doc = jsonio.loads_derived(self._cache_file(key).read_bytes())
            if doc.get("fingerprint") == fingerprint:
                manifest = _parse_manifest(doc.get("files"))
                if manifest is not None:
                    self.put(key, fingerprint, manifest, write=False)
                    return manifest
        return None

    def put(self, key: str, fingerprint: str, manifest: Digests, write: bool = True) -> None:
        with self._lock:
            self._manifests[key] = (fingerprint, manifest)
            self._manifests.move_to_end(key)
            while len(self._manifests) > _MANIFESTS:
                self._manifests.popitem(last=False)
        if write:
            doc = {"fingerprint": fingerprint, "files": [list(m) for m in manifest]}
            with contextlib.suppress(OSError):  # a cache: a read-only home still serves
                atomic_write_bytes(self._cache_file(key), json.dumps(doc).encode())

    def forget(self, key: str) -> None:
        with self._lock:
            self._manifests.pop(key, None)
        with contextlib.suppress(OSError):
            # fsutil's unlink, like every delete: a symlinked folder in a guarded home is
            # refused, never deleted through (a bare unlink here skipped that check)
            remove_file(self._cache_file(key))


def skill_fingerprint(rec: SkillRecord, front: dict[str, Any], installed: list[SkillFile]) -> str:
    record = {k: v for k, v in rec.to_json().items() if k not in ("root", "enabled")}
    doc = {
        "renderer": renderer_version(),
        "record": record,
        "frontmatter": front,
        "installed": [[f.path, f.sha256, f.size] for f in installed],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _parse_manifest(raw: Any) -> Digests | None:
    if not isinstance(raw, list) or not raw:
        return None
    out: Digests = []
    for item in raw:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[1], str)
            and len(item[1]) == 64
            and isinstance(item[2], int)
            and item[2] >= 0
        ):
            return None
        out.append((item[0], item[1], item[2]))
    return out if out[0][0] == SKILL_MD else None
