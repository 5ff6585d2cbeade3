"""Maintainers' operations on a signed registry: create its metadata, re-sign roles, rotate
keys, and list every file a registry folder must sign (`registry sign --bins`)."""

from __future__ import annotations

import copy
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from securesystemslib.signer import Signer
from tuf.api.metadata import Metadata, Root, Snapshot, Targets, Timestamp

from .. import limits
from ..errors import FormatError, UnsafePathError, UsageError
from ..manifest import parse_index, parse_manifest
from ..safety import safe_join
from . import BINS_PREFIX, ROLES
from . import keys as keymod
from .repo import EXPIRES_FIELD, Policy, Repo, delegations_for, meta_of, new_root_files
from .repo import target_of as _target_of

TOP_ROLES = ("root", "targets", "snapshot", "timestamp")


@dataclass
class KeysWritten:
    keys_dir: Path
    files: list[Path] = field(default_factory=list)
    keyids: dict[str, list[str]] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)  # key ids to retire once written


def create(
    root_dir: Path,
    keys_dir: Path,
    policy: Policy,
    targets: dict[str, tuple[str, int]],
    *,
    now: datetime | None = None,
) -> tuple[dict[str, bytes], KeysWritten]:
    """New keys (saved in `keys_dir`, refused when it already holds keys) and version 1 of
    every role; `targets` are the registry's first files (index.json, the sparse index)."""
    if keys_dir.is_dir() and any(keys_dir.glob("*.pem")):
        raise UsageError(
            f"{keys_dir} already holds keys",
            hint="give another --keys folder: one registry, one set of keys",
        )
    signers = {r: [keymod.generate() for _ in range(policy.thresholds[r])] for r in ROLES}
    ring = keymod.KeyRing()
    written = KeysWritten(keys_dir)
    for role, items in signers.items():
        for s in items:
            ring.add(role, s)
            written.files.append(keymod.save(keys_dir, role, s))
        written.keyids[role] = [s.public_key.keyid for s in items]
    repo = Repo(root_dir, ring, now=now)
    root = Root(
        version=1,
        consistent_snapshot=False,
        unrecognized_fields={EXPIRES_FIELD: dict(policy.expires)},
    )
    for role in TOP_ROLES:
        for s in signers[role]:
            root.add_key(s.public_key, role)
        root.roles[role].threshold = policy.thresholds[role]
    root_md = Metadata(root)
    repo._cache["root"] = root_md  # expires() reads the policy from it
    sign_root(repo, root_md, signers["root"])
    out = new_root_files(root_md)
    bins_keys = [s.public_key for s in signers[BINS_PREFIX]]
    delegations = delegations_for(bins_keys, policy.thresholds[BINS_PREFIX], policy.bin_bits)
    repo.put(
        "targets", Metadata(Targets(version=1, delegations=delegations)), "targets", bump=False
    )
    grouped: dict[str, Metadata[Targets]] = {
        name: Metadata(Targets(version=1)) for name in repo.succinct.get_roles()
    }
    for path, (sha, length) in sorted(targets.items()):
        grouped[repo.bin_for(path)].signed.targets[path] = _target_of(path, sha, length)
    for name, md in grouped.items():
        repo.put(name, md, BINS_PREFIX, bump=False)
    meta = {f"{n}.json": meta_of(repo.file_bytes(n), 1) for n in ["targets", *grouped]}
    repo.put("snapshot", Metadata(Snapshot(version=1, meta=meta)), "snapshot", bump=False)
    snap = meta_of(repo.file_bytes("snapshot"), 1)
    repo.put(
        "timestamp", Metadata(Timestamp(version=1, snapshot_meta=snap)), "timestamp", bump=False
    )
    return {**out, **repo.out}, written


def sign_root(repo: Repo, md: Metadata[Root], signers: Sequence[Signer]) -> None:
    md.signed.expires = repo.expires("root")
    md.signatures.clear()
    for s in signers:
        md.sign(s, append=True)


def resign(repo: Repo, roles: set[str], tree: dict[str, tuple[str, int]] | None) -> None:
    """`registry sign`: re-sign `roles` with fresh expiries (bins rebuilt from `tree`)."""
    if BINS_PREFIX in roles:
        assert tree is not None
        repo.rebuild_bins(tree)
    if "targets" in roles:
        repo.put("targets", repo.targets, "targets")
        repo.finish(["targets"])
    if "snapshot" in roles:
        repo.put("snapshot", repo.snapshot, "snapshot")
    if roles & {"snapshot", "timestamp"}:
        repo.refresh_timestamp(force=True)


def rotate(repo: Repo, role: str, threshold: int | None, keys_dir: Path) -> KeysWritten:
    """New keys for `role`. Top-level roles: a new root version (N+1) listing them, signed by
    the current root's threshold (and by the new root keys when `role` is root), then the
    role's metadata re-signed with the new keys. `bins`: a new targets.json delegation (the
    targets key) and every bin re-signed. The caller retires the old keys after writing."""
    count = threshold or (
        repo.succinct.threshold if role == BINS_PREFIX else repo.root.signed.roles[role].threshold
    )
    fresh = [keymod.generate() for _ in range(count)]
    written = KeysWritten(keys_dir, keyids={role: [s.public_key.keyid for s in fresh]})
    if role == BINS_PREFIX:
        bins = {name: repo.bin(name) for name in repo.succinct.get_roles()}  # verified now
        old = list(repo.succinct.keyids)
        targets = repo.targets
        targets.signed.delegations = delegations_for(
            [s.public_key for s in fresh], count, repo.succinct.bit_length
        )
        for s in fresh:
            repo.keys.add(role, s)
        repo.put("targets", targets, "targets")
        for name, md in bins.items():
            repo.put(name, md, BINS_PREFIX)
        repo.finish(["targets", *bins])
    else:
        loaded = {r: getattr(repo, r) for r in ("targets", "snapshot", "timestamp")}
        old_root = repo.root
        old = list(old_root.signed.roles[role].keyids)
        root_signers = repo.signers("root")  # the current root's threshold
        new_root: Metadata[Root] = Metadata(copy.deepcopy(old_root.signed))
        new_root.signed.version += 1
        for keyid in old:
            new_root.signed.revoke_key(keyid, role)
        for s in fresh:
            new_root.signed.add_key(s.public_key, role)
            repo.keys.add(role, s)
        new_root.signed.roles[role].threshold = count
        extra: list[Signer] = list(fresh) if role == "root" else []
        sign_root(repo, new_root, [*root_signers, *extra])
        repo._cache["root"] = new_root
        repo.out.update(new_root_files(new_root))
        if role in loaded:
            repo.put(role, loaded[role], role)
            repo.finish(["targets"] if role == "targets" else [])  # snapshot -> timestamp
    written.replaced = old
    for s in fresh:
        written.files.append(keymod.save(keys_dir, role, s))
    return written


def tree_targets(root_dir: Path) -> dict[str, tuple[str, int]]:
    """Every file a registry folder serves that clients verify: index.json, index/ (sparse)
    and each indexed package's package.json and `files`, hashed from disk and checked
    against its manifest (a mismatch is refused: nothing unpublished gets signed)."""
    out: dict[str, tuple[str, int]] = {}

    def add(rel: str) -> bytes:
        path = safe_join(root_dir, rel, "registry path")
        if path.is_symlink() or not path.is_file():
            raise UnsafePathError(f"{root_dir}: {rel} is missing or not a regular file")
        data = path.read_bytes()
        out[rel] = (hashlib.sha256(data).hexdigest(), len(data))
        return data

    index = parse_index(add("index.json"), source=f"{root_dir}/index.json")
    sparse = root_dir / "index"
    if sparse.is_dir() and not sparse.is_symlink():
        for dirpath, _, names in os.walk(sparse):
            for name in names:
                add(Path(dirpath, name).relative_to(root_dir).as_posix())
    for entry in index:
        raw = add(entry.manifest_path)
        if len(raw) > limits.MAX_MANIFEST_BYTES:
            raise FormatError(f"{entry.manifest_path} is too large")
        manifest = parse_manifest(raw, source=entry.manifest_path, expected_id=entry.package_id)
        for f in manifest.files or ():
            rel = f"{entry.package_root}/{f.path}"
            add(rel)
            if out[rel] != (f.sha256, f.size):
                raise FormatError(
                    f"{rel} does not match its manifest's sha256/size",
                    hint="run `ontoskills registry verify`; publish the package again",
                )
    return out
