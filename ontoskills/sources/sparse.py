"""Sparse registry index: one small file per package, fetched on demand (like cargo's sparse
protocol), next to the full `index.json` that old clients keep reading.

Layout (all static files, cacheable by any web server or CDN, ETag-revalidated by HttpSource):

    index.json                       unchanged OntoStore format (old clients, listings)
    index/config.json                {"sparse_version": 1, "index_sha256": "<sha of index.json>",
                                      "packages": N}
    index/<author>/<pkg>.json        that package's index entry, exactly as in index.json

A client probes `index/config.json`; when present it reads only the entries it needs, so
installing or checking one package costs O(1) in the size of the registry instead of
downloading and parsing every entry (20 MB and seconds at 100k packages: docs/SCALING.md).
The lock records the sha256 of config.json as the registry's index digest; the publisher
rewrites config.json (it embeds the full index's sha256) on every publish, so `--locked`
still notices a changed registry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonio, limits
from ..errors import AuthError, FormatError, NotFoundError, OntoskillsError, UnsafePathError
from ..fsutil import atomic_write_bytes
from ..manifest import IndexEntry, RegistryIndex, cap_tier, parse_index, tier_rank
from ..safety import split_package_id
from .base import BaseSource, IndexSnapshot

CONFIG = "index/config.json"
SPARSE_VERSION = 1
MAX_ENTRY_BYTES = 64 * 1024
COMMUNITY = "community"


@dataclass(frozen=True)
class SparseConfig:
    """`index/config.json` as read by clients and by `registry verify` (one reader)."""

    raw: dict[str, Any]  # {} when the file is JSON but not an object

    @property
    def version(self) -> object:
        return self.raw.get("sparse_version")

    @property
    def usable(self) -> bool:
        """A layout we know; anything else means: read index.json instead."""
        return self.version == SPARSE_VERSION


def read_sparse_config(data: bytes, where: str) -> SparseConfig:
    """Strict bounded JSON (FormatError when it is not JSON at all)."""
    raw = jsonio.loads(data, source=where, max_bytes=MAX_ENTRY_BYTES)
    return SparseConfig(raw if isinstance(raw, dict) else {})


def entry_path(package_id: str) -> str:
    author, name = split_package_id(package_id)
    return f"index/{author}/{name}.json"


class SparseIndex(RegistryIndex):
    """A RegistryIndex whose entries are read one by one; iterating loads the full index."""

    # private lookup state set with object.__setattr__ (not dataclass fields: not redecorated)
    _source: BaseSource
    _where: str
    _cache: dict[str, IndexEntry | None]
    _full: RegistryIndex | None

    def __init__(self, source: BaseSource, where: str) -> None:
        super().__init__(entries=(), warnings=())
        # RegistryIndex is a frozen dataclass; these are private lookup state, not fields.
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_full", None)

    def get(self, package_id: str) -> IndexEntry | None:
        if package_id not in self._cache:
            entry = self._read_entry(package_id)
            if entry is None:
                # A miss is a typo or a publisher that updated index.json but not the sparse
                # files yet: the full index decides (and feeds "did you mean").
                entry = self._all().get(package_id)
            self._cache[package_id] = entry
        return self._cache[package_id]

    def _read_entry(self, package_id: str) -> IndexEntry | None:
        rel = entry_path(package_id)
        try:
            data = self._source.read(rel, max_bytes=MAX_ENTRY_BYTES)
        except (NotFoundError, AuthError):  # S3 answers 403 for a missing key: a miss
            return None  # the full index decides, and reports a real auth failure itself
        where = f"{self._where}: {rel}"
        raw = jsonio.loads(data, source=where, max_bytes=MAX_ENTRY_BYTES)
        # One entry through the same validation as index.json (paths, names, tiers).
        wrapped = json.dumps({"packages": [raw]}).encode()
        entry = parse_index(wrapped, source=where).entries[0]
        if entry.package_id != package_id:
            raise FormatError(f"{where}: names {entry.package_id}, expected {package_id}")
        return entry

    def full_entry(self, package_id: str) -> IndexEntry | None:
        """The package's entry in the full index.json (read and parsed once per command)."""
        return self._all().get(package_id)

    def _all(self) -> RegistryIndex:
        if self._full is None:
            object.__setattr__(self, "_full", self._source.load_index().index)
        assert self._full is not None
        return self._full

    def __iter__(self) -> Iterator[IndexEntry]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def client_tier(index: RegistryIndex, entry: IndexEntry, cap: str | None) -> str:
    """The tier a client records: the entry's, capped by the registry's configured trust and,
    when the entry came from the sparse index, never above what index.json says for that
    package (community when index.json does not list it). A reviewer reads index.json; a
    sparse file that disagrees with it must not raise a package's tier.

    Confirming costs one full read of index.json, so it happens only when the answer could be
    above community (ad-hoc registries are capped at community and never pay it)."""
    tier = cap_tier(entry.trust_tier, cap)
    if isinstance(index, SparseIndex) and tier_rank(tier) > tier_rank(COMMUNITY):
        full = index.full_entry(entry.package_id)
        tier = cap_tier(tier, full.trust_tier if full is not None else COMMUNITY)
    return tier


def open_sparse(source: BaseSource) -> IndexSnapshot | None:
    """A snapshot backed by the sparse index, or None when the registry has none."""
    try:
        data = source.probe(CONFIG, max_bytes=MAX_ENTRY_BYTES)
    except OntoskillsError:
        data = None
    if data is None:
        # The probe is an optimisation (one attempt, no retries): a 404, an S3-style 403 for a
        # missing key, a host that errors on unknown paths or a cold offline cache all fall
        # back to index.json, which then reports any real failure with its own message.
        return None
    config = read_sparse_config(data, f"{source.config.name}: {CONFIG}")
    if not config.usable:
        return None  # a future layout we do not know: the full index still works
    return IndexSnapshot(
        index=SparseIndex(source, source.config.name),
        sha256=hashlib.sha256(data).hexdigest(),
        commit=source.commit,
    )


def sparse_files(index_data: bytes) -> dict[str, bytes]:
    """The exact bytes of every sparse file (`index/<author>/<pkg>.json` and `index/config.json`)
    for an `index.json`: publishers write these files and commit these bytes, and
    `registry verify` compares what a registry serves with them."""
    index = parse_index(index_data, source="index.json")  # refuse to publish what we refuse
    raw = jsonio.loads(index_data, source="index.json", max_items=limits.MAX_INDEX_ITEMS)
    out: dict[str, bytes] = {}
    for item, parsed in zip(raw["packages"], index.entries, strict=True):
        # normalised: canonical id and a relative manifest_path (historical variants resolved)
        item = {k: v for k, v in item.items() if k != "manifest_url"}
        item.update(package_id=parsed.package_id, manifest_path=parsed.manifest_path)
        out[entry_path(parsed.package_id)] = (
            json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n"
        ).encode()
    config = {
        "sparse_version": SPARSE_VERSION,
        "index_sha256": hashlib.sha256(index_data).hexdigest(),
        "packages": len(out),
    }
    out[CONFIG] = (json.dumps(config, sort_keys=True) + "\n").encode()
    return out


def write_sparse_files(root: Path, files: dict[str, bytes]) -> None:
    """Write `sparse_files()` under root, drop stale entry files, config.json last (atomically,
    so a reader never sees a config ahead of its entries). Never through a symlink: a linked
    `index/` would let this write, and delete, files elsewhere."""
    for rel in ["index", *files]:
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            if (root.joinpath(*parts[:i])).is_symlink():
                raise UnsafePathError(
                    f"{root}: {'/'.join(parts[:i])} is a symlink; the sparse index is not "
                    "written through links",
                    hint="a registry holds regular folders and files: replace the link",
                )
    for rel, body in files.items():
        path = root / rel
        if rel != CONFIG and (not path.is_file() or path.read_bytes() != body):
            atomic_write_bytes(path, body)  # a kill mid-publish never leaves half an entry
    base = root / "index"
    if base.is_dir():
        for dirpath, _, names in os.walk(base):
            for name in names:
                rel = Path(dirpath, name).relative_to(root).as_posix()
                if rel not in files:
                    os.unlink(Path(dirpath, name))
    atomic_write_bytes(root / CONFIG, files[CONFIG])


def write_sparse_index(root: Path) -> int:
    """Regenerate index/ from root/index.json; returns the number of entries. For publishers
    and `registry init`."""
    files = sparse_files((root / "index.json").read_bytes())
    write_sparse_files(root, files)
    return len(files) - 1
