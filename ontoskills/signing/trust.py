"""Which root a client trusts for a registry, and what it does with an unsigned one.

A registry is signed when it serves `metadata/root.json`. The trust anchor, in order:
1. the root configured with `registry add NAME URL --root FILE` (or `--trust-on-first-use`);
2. the root the lock names (its root key ids: the first published root with exactly those
   keys, found once and kept), so `ci` on a fresh machine trusts what was reviewed;
3. otherwise the registry's current root, trusted on first use, with a warning naming its
   keys (an ad-hoc `--registry`, or a registry added before it was signed).
ngclient then walks every root rotation from the anchor (each signed by the previous root's
threshold). The verified state (newest root, timestamp, snapshot, bins) lives in
`state/tuf/<anchor id>/` of the home, so rollback protection survives across commands and
is shared by every location (mirror) trusted with the same root.

A registry that was signed (configured root, or signed in the lock) and now serves no
metadata is refused: stripping the metadata must not downgrade it to unverified.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path

from securesystemslib.formats import encode_canonical
from tuf.api import exceptions as tufx
from tuf.api.metadata import Metadata, Root

from .. import limits
from ..errors import NotFoundError, RootChainError, SignatureError, UsageError
from ..fsutil import atomic_write_bytes
from ..progress import Reporter
from ..registries import RegistryConfig
from ..sources import BaseSource, SourceOptions, open_source
from . import MAX_ROOT_BYTES, ROOT_PATH, versioned_root
from .client import SignedRegistry, VerifiedSource
from .gate import Expectation, Opened

MAX_ROOTS = 64


def key_fingerprint(keytype: str, scheme: str, keyval: dict[str, str]) -> str:
    """The TUF key id: sha256 of the key's canonical JSON (what securesystemslib computes)."""
    doc = encode_canonical({"keytype": keytype, "scheme": scheme, "keyval": keyval})
    return hashlib.sha256(str(doc).encode()).hexdigest()


def root_keyids(md: Metadata[Root]) -> tuple[str, ...]:
    return tuple(sorted(md.signed.roles[Root.type].keyids))


def fingerprints(md: Metadata[Root]) -> list[str]:
    """`role: keyid (keytype)` for every key of every top-level role."""
    out = []
    for role, r in md.signed.roles.items():
        for keyid in r.keyids:
            key = md.signed.keys[keyid]
            out.append(f"{role}: {keyid} ({key.keytype}), threshold {r.threshold}")
    return out


def parse_root(data: bytes, where: str) -> Metadata[Root]:
    """A root that is self-signed at its threshold, whose key ids are the sha256 of the keys
    (so a key id in a lock names a key, not a label anyone can reuse)."""
    try:
        md = Metadata[Root].from_bytes(data)
        if not isinstance(md.signed, Root):
            raise tufx.RepositoryError(f"a {md.signed.type} file, not a root")
        md.signed.verify_delegate(Root.type, md.signed_bytes, md.signatures)
    except (tufx.RepositoryError, ValueError, KeyError, TypeError) as exc:
        raise SignatureError(
            f"{where} is not a valid self-signed TUF root ({exc})",
            hint="get the registry's root.json from its maintainers",
        ) from None
    for keyid, key in md.signed.keys.items():
        if key_fingerprint(key.keytype, key.scheme, key.keyval) != keyid:
            raise SignatureError(f"{where}: key id {keyid[:16]} is not the key's sha256")
    return md


def read_root_file(path: Path) -> bytes:
    # A regular file, bounded: `--root /dev/zero` read for ever and a FIFO blocked open().
    try:
        return limits.read_regular_file(
            path, MAX_ROOT_BYTES, what="trusted root.json", error=UsageError
        )
    except OSError as exc:
        raise UsageError(f"cannot read the trusted root {path}: {exc.strerror}") from None


@dataclass(frozen=True)
class PinnedRoot:
    """A root `registry add` pinned: `stored` is its copy's path relative to config.toml's
    folder (what the config records), `first_use` when it is the registry's current root."""

    stored: str
    version: int
    fingerprints: list[str]
    first_use: bool


def pin_root(
    reg: RegistryConfig, root_file: Path | None, options: SourceOptions, config_dir: Path
) -> PinnedRoot:
    """`registry add --root FILE` (or `--trust-on-first-use`: the registry's current root):
    validate it and keep a copy beside config.toml (`trust/NAME.root.json`). The caller
    shows the fingerprints, for the user to compare with what the maintainers publish."""
    if root_file is not None:
        data = read_root_file(root_file)
        where = str(root_file)
    else:
        source = open_source(reg, options)
        try:
            data = source.read(ROOT_PATH, max_bytes=MAX_ROOT_BYTES)
        except NotFoundError:
            raise UsageError(
                f"{reg.url} serves no {ROOT_PATH}: it is not a signed registry",
                hint="add it without --trust-on-first-use",
            ) from None
        finally:
            source.close()
        where = f"{reg.name}: {ROOT_PATH}"
    md = parse_root(data, where)
    stored = f"trust/{reg.name}.root.json"
    atomic_write_bytes(config_dir / stored, data)
    return PinnedRoot(stored, md.signed.version, fingerprints(md), root_file is None)


def _id(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()[:20]


def _published_roots(source: BaseSource) -> list[tuple[bytes, Metadata[Root]]]:
    out = []
    for version in range(1, MAX_ROOTS + 1):
        try:
            data = source.read(versioned_root(version), max_bytes=MAX_ROOT_BYTES)
        except NotFoundError:
            break
        out.append((data, parse_root(data, f"{source.config.name}: {versioned_root(version)}")))
    return out


def _walk_from(source: BaseSource, keys: tuple[str, ...]) -> list[tuple[bytes, Metadata[Root]]]:
    """The published roots from the first with exactly `keys` to the newest, each verified
    to be signed by its predecessor's threshold; RootChainError when there is none."""
    roots = _published_roots(source)
    start = next((i for i, (_, md) in enumerate(roots) if root_keyids(md) == keys), None)
    if start is None:
        raise RootChainError(
            f"{source.config.name}: no root of the registry has the root keys recorded in the "
            f"lock ({', '.join(k[:16] for k in keys)}): its root does not chain to them",
            hint="nothing was installed; the registry was replaced or its root keys were "
            "changed without a signed rotation. If that is legitimate, run `ontoskills "
            "update` (or `registry add NAME URL --root NEW.json`) to trust the new root",
        )
    chain = roots[start:]
    for (_, prev), (_, new) in itertools.pairwise(chain):
        try:
            prev.signed.verify_delegate(Root.type, new.signed_bytes, new.signatures)
        except tufx.UnsignedMetadataError as exc:
            raise RootChainError(
                f"{source.config.name}: root v{new.signed.version} is not signed by the "
                f"threshold of root v{prev.signed.version} ({exc})",
                hint="nothing was installed; tell the registry's maintainers",
            ) from None
    return chain


def _anchor(
    source: BaseSource, state_root: Path, exp: Expectation, latest: bytes, reporter: Reporter | None
) -> tuple[bytes, Path]:
    name = source.config.name
    if exp.root_file is not None:
        data = read_root_file(exp.root_file)
        parse_root(data, str(exp.root_file))
        return data, state_root / f"root-{_id(data)}"
    # Kept per location: the anchor chosen the first time (the lock's root, else the root
    # trusted on first use) and everything verified since, for rollback protection.
    state = state_root / f"url-{_id(source.config.url)}"
    stored = state / "anchor.json"
    if stored.is_file():
        return stored.read_bytes(), state
    if exp.locked_keys:
        data = _walk_from(source, exp.locked_keys)[0][0]
    else:
        md = parse_root(latest, f"{name}: {ROOT_PATH}")
        data = latest
        if reporter is not None:
            reporter.warn(
                f"{name} is signed; trusting its root v{md.signed.version} on first use "
                f"(root keys {', '.join(k[:16] for k in root_keyids(md))}); pin it with "
                "`ontoskills registry add NAME URL --root root.json`"
            )
    atomic_write_bytes(stored, data)  # creates the folder, never through a symlink
    return data, state


def open_signed(
    source: BaseSource, state_root: Path, exp: Expectation, latest: bytes, reporter: Reporter | None
) -> Opened:
    """Refresh the registry's metadata from the chosen anchor and check the lock's root keys
    are on the chain; the source returned verifies every file against signed targets."""
    name = source.config.name
    anchor, state = _anchor(source, state_root, exp, latest, reporter)
    signed = SignedRegistry(source, state, anchor)
    signed.refresh()
    keys = root_keyids(signed.trusted_root())
    if exp.locked_keys and exp.locked_keys != keys:
        chain = {root_keyids(md) for md in signed.verified_roots()}
        if exp.locked_keys not in chain:
            walked = {root_keyids(md) for _, md in _walk_from(source, exp.locked_keys)}
            if keys not in walked:  # the locked keys' chain must lead to what we trust now
                raise RootChainError(
                    f"{name}: the registry's current root does not chain to the root keys "
                    "recorded in the lock",
                    hint="nothing was installed; if the new root is legitimate, run "
                    "`ontoskills update` to record it",
                )
    return Opened(VerifiedSource(source, signed, reporter), keys)
