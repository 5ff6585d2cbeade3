"""`registry verify` for a signed registry: signatures, thresholds, the root chain, expiries
(with a warning before they run out) and that every file a client installs is a signed target
with the same length and sha256. Reads through any BaseSource (folder, git at one commit, HTTP)
and reports every problem it finds instead of stopping at the first, as a client would.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from tuf.api import exceptions as tufx
from tuf.api.metadata import Metadata, Root, Snapshot, Targets, Timestamp
from tuf.api.serialization import DeserializationError

from .. import limits
from ..errors import OntoskillsError
from ..manifest import RegistryIndex, parse_index, parse_manifest
from ..sources import BaseSource
from ..sources.sparse import CONFIG as SPARSE_CONFIG
from ..sources.sparse import entry_path
from . import (
    BINS_PREFIX,
    MAX_ROOT_BYTES,
    MAX_SNAPSHOT_BYTES,
    MAX_TARGETS_BYTES,
    MAX_TIMESTAMP_BYTES,
    METADATA_DIR,
    ROOT_PATH,
    versioned_root,
)
from .repo import DEFAULT_EXPIRES, EXPIRES_FIELD, meta_of

MAX_ROOTS = 64
WARN_CAP = timedelta(days=30)


@dataclass(frozen=True)
class Problem:
    level: str  # error | warning
    code: str
    message: str


@dataclass
class SignedCheck:
    problems: list[Problem]
    root_version: int = 0
    targets: int = 0
    expires: dict[str, str] | None = None


class _Checker:
    def __init__(self, source: BaseSource, now: datetime) -> None:
        self.source = source
        self.now = now
        self.out: list[Problem] = []
        self.expires: dict[str, str] = {}

    def err(self, code: str, message: str) -> None:
        self.out.append(Problem("error", code, message))

    def warn(self, code: str, message: str) -> None:
        self.out.append(Problem("warning", code, message))

    def read(self, rel: str, limit: int) -> bytes | None:
        try:
            return self.source.read(rel, max_bytes=limit)
        except OntoskillsError as exc:
            self.err("metadata-missing", f"{rel}: {exc.message}")
            return None

    def load(self, rel: str, limit: int) -> tuple[bytes, Metadata[Any]] | None:
        data = self.read(rel, limit)
        if data is None:
            return None
        try:
            return data, Metadata.from_bytes(data)
        except DeserializationError as exc:
            self.err("metadata-invalid", f"{rel} is not TUF metadata ({exc})")
            return None

    def signed_by(self, delegator: Root | Targets, role: str, md: Metadata[Any], rel: str) -> None:
        try:
            delegator.verify_delegate(role, md.signed_bytes, md.signatures)
        except tufx.UnsignedMetadataError as exc:
            self.err("signature", f"{rel}: {exc}")

    def expiry(self, role: str, name: str, md: Metadata[Any], root: Root) -> None:
        policy = root.unrecognized_fields.get(EXPIRES_FIELD, {})
        lifetime = policy.get(role) if isinstance(policy, dict) else None
        span = timedelta(seconds=lifetime if isinstance(lifetime, int) else DEFAULT_EXPIRES[role])
        left = md.signed.expires - self.now
        self.expires[name] = md.signed.expires.isoformat()
        if left <= timedelta(0):
            self.err("expired", f"{name} expired at {md.signed.expires.isoformat()}")
        elif left < min(span / 4, WARN_CAP):
            hours = left.total_seconds() / 3600
            hint = "registry sign --timestamp" if role == "timestamp" else f"registry sign --{role}"
            if role == "root":
                hint = "registry keys rotate root"
            self.warn("expires-soon", f"{name} expires in {hours:.1f} h: run `ontoskills {hint}`")

    # the checks -------------------------------------------------------------------------
    def roots(self) -> Root | None:
        chain: list[tuple[bytes, Metadata[Root]]] = []
        for version in range(1, MAX_ROOTS + 1):
            rel = versioned_root(version)
            try:
                data = self.source.read(rel, max_bytes=MAX_ROOT_BYTES)
            except OntoskillsError:
                break
            try:
                md = Metadata[Root].from_bytes(data)
            except DeserializationError as exc:
                self.err("metadata-invalid", f"{rel} is not TUF metadata ({exc})")
                return None
            if md.signed.version != version:
                self.err("root-chain", f"{rel} holds root version {md.signed.version}")
            self.signed_by(md.signed, "root", md, rel)
            chain.append((data, md))
        if not chain:
            self.err("root-chain", f"no {versioned_root(1)}: clients cannot start the root chain")
            return None
        for (_, prev), (_, new) in itertools.pairwise(chain):
            self.signed_by(prev.signed, "root", new, versioned_root(new.signed.version))
        latest = self.read(ROOT_PATH, MAX_ROOT_BYTES)
        if latest is not None and latest != chain[-1][0]:
            self.err("root-chain", f"{ROOT_PATH} is not {versioned_root(len(chain))}")
        root = chain[-1][1]
        self.expiry("root", "root.json", root, root.signed)
        return root.signed

    def top(self, root: Root) -> tuple[Timestamp, Snapshot, Targets] | None:
        loaded: dict[str, tuple[bytes, Metadata[Any]]] = {}
        limits_ = {"timestamp": MAX_TIMESTAMP_BYTES, "snapshot": MAX_SNAPSHOT_BYTES,
                   "targets": MAX_TARGETS_BYTES}  # fmt: skip
        for role, limit in limits_.items():
            rel = f"{METADATA_DIR}/{role}.json"
            got = self.load(rel, limit)
            if got is None:
                return None
            loaded[role] = got
            self.signed_by(root, role, got[1], rel)
            self.expiry(role, f"{role}.json", got[1], root)
        ts, snap = loaded["timestamp"][1].signed, loaded["snapshot"][1].signed
        if ts.snapshot_meta != meta_of(loaded["snapshot"][0], snap.version):
            self.err("mix-and-match", "timestamp.json does not name snapshot.json's bytes")
        targets_meta = snap.meta.get("targets.json")
        if targets_meta != meta_of(loaded["targets"][0], loaded["targets"][1].signed.version):
            self.err("mix-and-match", "snapshot.json does not name targets.json's bytes")
        return ts, snap, loaded["targets"][1].signed

    def bins(self, root: Root, snap: Snapshot, targets: Targets) -> dict[str, tuple[str, int]]:
        roles = targets.delegations.succinct_roles if targets.delegations else None
        if roles is None:
            self.err("delegation", "targets.json does not delegate to hashed bins")
            return {}
        out: dict[str, tuple[str, int]] = {}
        for name in roles.get_roles():
            rel = f"{METADATA_DIR}/{name}.json"
            got = self.load(rel, MAX_TARGETS_BYTES)
            if got is None:
                continue
            data, md = got
            self.signed_by(targets, name, md, rel)
            if snap.meta.get(f"{name}.json") != meta_of(data, md.signed.version):
                self.err("mix-and-match", f"snapshot.json does not name {name}.json's bytes")
            if name == roles.get_role_for_target("index.json"):  # one bin's expiry is theirs all
                self.expiry(BINS_PREFIX, "bins", md, root)
            for path, target in md.signed.targets.items():
                if roles.get_role_for_target(path) != name:
                    self.err("delegation", f"{name}.json lists {path}, which is not its bin")
                out[path] = (target.hashes.get("sha256", ""), target.length)
        return out

    def files(self, signed: dict[str, tuple[str, int]]) -> None:
        """Every file a client reads against its target; targets nothing serves: warnings."""
        expected: dict[str, tuple[str, int]] = {}

        def actual(rel: str) -> bytes | None:
            try:
                data = self.source.read(rel, max_bytes=limits.MAX_INDEX_BYTES)
            except OntoskillsError:
                return None
            expected[rel] = (hashlib.sha256(data).hexdigest(), len(data))
            return data

        raw = actual("index.json")
        index: RegistryIndex | None = None
        if raw is not None:
            try:
                index = parse_index(raw, source="index.json")
            except OntoskillsError:
                index = None  # the package checks report it
        if index is not None:
            if actual(SPARSE_CONFIG) is not None:
                for entry in index:
                    actual(entry_path(entry.package_id))
            for entry in index:
                data = actual(entry.manifest_path)
                if data is None:
                    continue
                try:
                    manifest = parse_manifest(data, source=entry.manifest_path)
                except OntoskillsError:
                    continue
                prefix = f"{entry.package_root}/" if entry.package_root else ""
                for f in manifest.files or ():
                    if f.sha256 is not None and f.size is not None:
                        expected[prefix + f.path] = (f.sha256, f.size)
        for rel, want in sorted(expected.items()):
            have = signed.get(rel)
            if have is None:
                self.err("unsigned", f"{rel} is served but is not a signed target")
            elif have != want:
                self.err("target-mismatch", f"{rel} differs from its signed target (length/sha256)")
        stale = sorted(set(signed) - set(expected))
        if stale:
            self.warn(
                "stale-target",
                f"{len(stale)} signed target(s) no file of the registry needs "
                f"({', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''})",
            )


def check_registry(source: BaseSource, now: datetime | None = None) -> SignedCheck:
    checker = _Checker(source, now or datetime.now(timezone.utc))
    result = SignedCheck(checker.out)
    root = checker.roots()
    if root is None:
        return result
    result.root_version = root.version
    top = checker.top(root)
    if top is not None:
        _, snap, targets = top
        signed = checker.bins(root, snap, targets)
        result.targets = len(signed)
        checker.files(signed)
    result.expires = checker.expires
    return result
