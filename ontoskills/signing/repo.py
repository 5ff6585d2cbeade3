"""Maintainers' side: create, update and re-sign a registry's TUF metadata (python-tuf's
Metadata API, the way its `examples/repository` and PEP 458's hashed bins do it).

`Repo` reads the metadata of a registry work tree and VERIFIES each file it loads against the
current keys before it re-signs anything built on it: a pull request that edits
`metadata/bins-3.json` by hand (say, to add a target) must not get signed along with the next
publish. Every operation returns the files to write (`{relpath: bytes}`); the caller writes
them (`write_files`, roots first, timestamp last) and commits them with the package bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

from securesystemslib.signer import Signer
from tuf.api.exceptions import UnsignedMetadataError
from tuf.api.metadata import (
    Delegations,
    Metadata,
    MetaFile,
    Root,
    Signed,
    Snapshot,
    SuccinctRoles,
    TargetFile,
    Targets,
    Timestamp,
)
from tuf.api.serialization import DeserializationError
from tuf.api.serialization.json import JSONSerializer

from ..asciinum import uint
from ..errors import FormatError, UnsafePathError, UsageError
from ..fsutil import atomic_write_bytes
from . import BINS_PREFIX, METADATA_DIR, ROLES, ROOT_PATH, versioned_root
from .keys import KeyRing

DAY = 86400
DEFAULT_EXPIRES = {
    "root": 365 * DAY,
    "targets": 365 * DAY,
    BINS_PREFIX: 365 * DAY,
    "snapshot": 365 * DAY,
    "timestamp": DAY,  # a scheduled `registry sign --timestamp` refreshes it
}
DEFAULT_BIN_BITS = 4  # 16 bins; `--bins N` (a power of two)
# Maintainer settings travel in the signed root (clients ignore unknown fields).
EXPIRES_FIELD = "x-ontoskills-expires"
_SERIALIZER = JSONSerializer(compact=False)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": DAY}


def parse_duration(text: str, what: str) -> int:
    text = text.strip()
    count = uint(text[:-1], limit=999_999) if text[-1:] in _UNITS else None
    if not count or count > 999_999:  # ASCII digits only: '٣d' is not 3 days
        raise UsageError(
            f"{what}: {text!r} is not a duration",
            hint="write a whole number and a unit: 30m, 12h, 1d, 365d",
        )
    return count * _UNITS[text[-1]]


def parse_role_values(items: Iterable[str], what: str) -> dict[str, str]:
    """`ROLE=VALUE` options (`--threshold root=2`, `--expires timestamp=12h`)."""
    out: dict[str, str] = {}
    for item in items:
        role, sep, value = item.partition("=")
        if not sep or role not in ROLES:
            raise UsageError(
                f"{what} {item!r}: expected ROLE=VALUE with ROLE one of {', '.join(ROLES)}"
            )
        out[role] = value
    return out


@dataclass
class Policy:
    thresholds: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 1))
    expires: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_EXPIRES))
    bin_bits: int = DEFAULT_BIN_BITS

    @classmethod
    def from_options(cls, thresholds: list[str], expires: list[str], bins: int) -> Policy:
        policy = cls()
        for role, value in parse_role_values(thresholds, "--threshold").items():
            count = uint(value, limit=16)  # ASCII digits only: '²' or '١٦' is not a count
            if count is None or not 1 <= count <= 16:
                raise UsageError(
                    f"--threshold {role}={value}: a whole number from 1 to 16",
                    hint=f"write it in ASCII digits, e.g. --threshold {role}=2",
                )
            policy.thresholds[role] = count
        for role, value in parse_role_values(expires, "--expires").items():
            policy.expires[role] = parse_duration(value, f"--expires {role}")
        if bins < 2 or bins > 16384 or bins & (bins - 1):
            raise UsageError(f"--bins {bins}: a power of two from 2 to 16384")
        policy.bin_bits = bins.bit_length() - 1
        return policy


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def meta_of(data: bytes, version: int) -> MetaFile:
    return MetaFile(version, len(data), {"sha256": hashlib.sha256(data).hexdigest()})


def target_of(path: str, sha256: str, length: int) -> TargetFile:
    return TargetFile(length, {"sha256": sha256}, path)


class Repo:
    """The metadata of one registry work tree (`root_dir`), loaded lazily and verified."""

    def __init__(self, root_dir: Path, keys: KeyRing, *, now: datetime | None = None) -> None:
        self.dir = root_dir
        self.keys = keys
        self.now = now or _now()
        self.out: dict[str, bytes] = {}
        self._cache: dict[str, Metadata[Any]] = {}

    # loading --------------------------------------------------------------------------
    def _read(self, name: str, kind: type[Signed]) -> Metadata[Any]:
        rel = f"{METADATA_DIR}/{name}.json"
        if rel in self.out:
            return Metadata.from_bytes(self.out[rel])
        path = self.dir / rel
        if path.is_symlink() or not path.is_file():
            raise FormatError(
                f"{self.dir}: {rel} is missing or not a regular file",
                hint="run `ontoskills registry verify` on the registry",
            )
        try:
            md = Metadata.from_bytes(path.read_bytes())
        except DeserializationError as exc:
            raise FormatError(f"{self.dir}: {rel} is not TUF metadata ({exc})") from None
        if not isinstance(md.signed, kind):
            raise FormatError(f"{self.dir}: {rel} is {md.signed.type}, not {kind.type}")
        return md

    def _verified(self, name: str, kind: type[Signed], role: str) -> Metadata[Any]:
        if name not in self._cache:
            md = self._read(name, kind)
            delegator: Root | Targets = (
                self.targets.signed if role == BINS_PREFIX else self.root.signed
            )
            try:
                delegator.verify_delegate(
                    name if role == BINS_PREFIX else role, md.signed_bytes, md.signatures
                )
            except UnsignedMetadataError as exc:
                raise FormatError(
                    f"{self.dir}: {METADATA_DIR}/{name}.json is not signed by its {role} keys "
                    f"({exc}); it was edited outside ontoskills",
                    hint="restore it from version control; nothing was signed",
                ) from None
            self._cache[name] = md
        return self._cache[name]

    @property
    def root(self) -> Metadata[Root]:
        if "root" not in self._cache:
            md = self._read("root", Root)
            try:
                md.signed.verify_delegate(Root.type, md.signed_bytes, md.signatures)
            except UnsignedMetadataError as exc:
                raise FormatError(f"{self.dir}: {ROOT_PATH} is not self-signed ({exc})") from None
            self._cache["root"] = md
        return cast("Metadata[Root]", self._cache["root"])

    @property
    def targets(self) -> Metadata[Targets]:
        return self._verified("targets", Targets, "targets")

    @property
    def snapshot(self) -> Metadata[Snapshot]:
        return self._verified("snapshot", Snapshot, "snapshot")

    @property
    def timestamp(self) -> Metadata[Timestamp]:
        return self._verified("timestamp", Timestamp, "timestamp")

    @property
    def succinct(self) -> SuccinctRoles:
        delegations = self.targets.signed.delegations
        if delegations is None or delegations.succinct_roles is None:
            raise FormatError(f"{self.dir}: targets.json has no hashed-bin delegation")
        return delegations.succinct_roles

    def bin(self, name: str) -> Metadata[Targets]:
        if not self.succinct.is_delegated_role(name):
            raise FormatError(f"{self.dir}: {name} is not a bin of this registry")
        return self._verified(name, Targets, BINS_PREFIX)

    def bin_for(self, path: str) -> str:
        return self.succinct.get_role_for_target(path)

    def expires(self, role: str) -> datetime:
        policy = self.root.signed.unrecognized_fields.get(EXPIRES_FIELD, {})
        seconds = policy.get(role) if isinstance(policy, dict) else None
        if not isinstance(seconds, int) or seconds <= 0:
            seconds = DEFAULT_EXPIRES[role]
        return self.now + timedelta(seconds=seconds)

    # signing ----------------------------------------------------------------------------
    def signers(self, role: str) -> list[Signer]:
        if role == BINS_PREFIX:
            keyids, threshold = self.succinct.keyids, self.succinct.threshold
        else:
            r = self.root.signed.roles[role]
            keyids, threshold = r.keyids, r.threshold
        return list(self.keys.require(role, keyids, threshold, "the keys folder"))

    def put(self, name: str, md: Metadata[Any], role: str, *, bump: bool = True) -> bytes:
        """Bump version and expiry, sign with the role's keys, keep the bytes to write."""
        if bump:
            md.signed.version += 1
        md.signed.expires = self.expires(role)
        md.signatures.clear()
        for signer in self.signers(role):
            md.sign(signer, append=True)
        data = md.to_bytes(_SERIALIZER) + b"\n"
        self.out[f"{METADATA_DIR}/{name}.json"] = data
        self._cache[name] = md
        return data

    def file_bytes(self, name: str) -> bytes:
        rel = f"{METADATA_DIR}/{name}.json"
        return self.out[rel] if rel in self.out else (self.dir / rel).read_bytes()

    def finish(self, names: Iterable[str] = ()) -> dict[str, bytes]:
        """The snapshot for the bins (or `targets`) whose bytes it does not name yet (changed
        now, or by a publish killed between two files), then the timestamp."""
        snap = self.snapshot
        changed = False
        for name in names:
            md = self.targets if name == "targets" else self.bin(name)
            meta = meta_of(self.file_bytes(name), md.signed.version)
            if snap.signed.meta.get(f"{name}.json") != meta:
                snap.signed.meta[f"{name}.json"] = meta
                changed = True
        if changed:
            self.put("snapshot", snap, "snapshot")
        return self.refresh_timestamp(force=False)

    def refresh_timestamp(self, *, force: bool = True) -> dict[str, bytes]:
        ts = self.timestamp
        meta = meta_of(self.file_bytes("snapshot"), self.snapshot.signed.version)
        if force or ts.signed.snapshot_meta != meta:
            ts.signed.snapshot_meta = meta
            self.put("timestamp", ts, "timestamp")
        return self.out

    # operations -------------------------------------------------------------------------
    def apply(self, upsert: dict[str, tuple[str, int]], remove: Iterable[str]) -> dict[str, bytes]:
        """A publish: drop `remove`, add or replace `upsert` (path -> sha256, length); only
        the bins holding those paths are re-signed."""
        changes: dict[str, list[tuple[str, TargetFile | None]]] = {}
        for path in remove:
            changes.setdefault(self.bin_for(path), []).append((path, None))
        for path, (sha, length) in upsert.items():
            changes.setdefault(self.bin_for(path), []).append((path, target_of(path, sha, length)))
        touched = []
        for name, edits in sorted(changes.items()):
            md = self.bin(name)
            before = dict(md.signed.targets)
            for path, target in edits:
                if target is None:
                    md.signed.targets.pop(path, None)
            for path, target in edits:
                if target is not None:
                    md.signed.targets[path] = target
            if md.signed.targets != before:
                self.put(name, md, BINS_PREFIX)
            touched.append(name)
        return self.finish(touched)

    def rebuild_bins(self, targets: dict[str, tuple[str, int]]) -> dict[str, bytes]:
        """Every bin from scratch for exactly `targets` (`registry sign --bins`)."""
        grouped: dict[str, dict[str, TargetFile]] = {n: {} for n in self.succinct.get_roles()}
        for path, (sha, length) in sorted(targets.items()):
            grouped[self.bin_for(path)][path] = target_of(path, sha, length)
        for name, files in grouped.items():
            md = self.bin(name)
            md.signed.targets = files
            self.put(name, md, BINS_PREFIX)
        return self.finish(list(grouped))


def write_files(root_dir: Path, files: dict[str, bytes]) -> None:
    """Roots first (a client needs the new keys before it sees what they sign), then targets
    and bins, the snapshot, and the timestamp last: a reader between two writes sees a
    timestamp that still names the previous, complete snapshot."""
    meta = root_dir / METADATA_DIR
    if meta.is_symlink():
        raise UnsafePathError(
            f"{root_dir}: {METADATA_DIR} is a symlink; metadata is not written through links"
        )
    meta.mkdir(exist_ok=True)

    def rank(rel: str) -> tuple[int, str]:
        name = rel.rsplit("/", 1)[-1]
        order = (
            0
            if name.endswith("root.json")
            else 3
            if name == "timestamp.json"
            else (2 if name == "snapshot.json" else 1)
        )
        return order, rel

    for rel in sorted(files, key=rank):
        path = root_dir / rel
        if path.is_symlink():
            raise UnsafePathError(f"{root_dir}: {rel} is a symlink")
        atomic_write_bytes(path, files[rel])


def new_root_files(md: Metadata[Root]) -> dict[str, bytes]:
    data = md.to_bytes(_SERIALIZER) + b"\n"
    return {versioned_root(md.signed.version): data, ROOT_PATH: data}


def delegations_for(keys: list[Any], threshold: int, bits: int) -> Delegations:
    roles = SuccinctRoles([k.keyid for k in keys], threshold, bits, BINS_PREFIX)
    return Delegations({k.keyid: k for k in keys}, roles=None, succinct_roles=roles)


@dataclass(frozen=True)
class RoleKeys:
    role: str
    keyids: tuple[str, ...]  # sha256 fingerprints
    threshold: int

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "keyids": list(self.keyids), "threshold": self.threshold}


@dataclass(frozen=True)
class KeyTable:
    """`registry keys list`: who signs each role, under which root version."""

    root_version: int
    roles: tuple[RoleKeys, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "registry keys list",
            "root_version": self.root_version,
            "roles": [r.to_json() for r in self.roles],
        }


def key_table(repo: Repo) -> KeyTable:
    """The top-level roles' key ids and thresholds (from the root), then the bins'."""
    root = repo.root.signed
    rows = [
        RoleKeys(r, tuple(root.roles[r].keyids), root.roles[r].threshold)
        for r in ("root", "targets", "snapshot", "timestamp")
    ]
    rows.append(RoleKeys("bins", tuple(repo.succinct.keyids), repo.succinct.threshold))
    return KeyTable(root.version, tuple(rows))
