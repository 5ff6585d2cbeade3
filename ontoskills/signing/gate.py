"""The one question every command asks of a registry before reading it: is it signed, and
may we use it? Kept free of tuf imports: an unsigned registry (OntoStore today) costs one
probe of `metadata/root.json`, and tuf is imported only when that file exists.

See trust.py for how a signed registry's root is chosen and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    DowngradeError,
    LimitExceededError,
    MetadataLimitError,
    NotFoundError,
    UnsignedRegistryError,
)
from ..progress import Reporter
from ..sources import BaseSource
from . import MAX_ROOT_BYTES, ROOT_PATH


@dataclass(frozen=True)
class Expectation:
    """What the user's configuration and lock say about one registry."""

    root_file: Path | None = None  # configured trusted root (registry add --root)
    locked_keys: tuple[str, ...] = ()  # root key ids the lock records
    locked_signed: bool = False
    require_signed: bool = False
    builtin: bool = False  # the built-in OntoStore (unsigned today)

    @property
    def expects_signed(self) -> bool:
        return self.root_file is not None or self.locked_signed


@dataclass(frozen=True)
class Opened:
    source: BaseSource  # a VerifiedSource when signed
    root_keys: tuple[str, ...] | None  # the trusted root's root key ids; None: unsigned

    def release(self) -> None:
        """Let go of the verified state (its lock); the plain source is closed by its owner."""
        signed = getattr(self.source, "signed", None)
        if signed is not None:
            signed.close()


def latest_root(source: BaseSource, exp: Expectation) -> bytes | None:
    """metadata/root.json, or None when the registry is not signed.

    A registry we know to be signed is read with retries, and any failure is the error shown.
    Otherwise it is a probe (one attempt; a 404, an S3-style 403, a host that answers 5xx for
    unknown paths or a cold --offline cache all mean "unsigned", as for the sparse index),
    so an unsigned registry costs one small request and never fails because of the probe."""
    try:
        if exp.expects_signed:
            return source.read(ROOT_PATH, max_bytes=MAX_ROOT_BYTES)
        return source.probe(ROOT_PATH, max_bytes=MAX_ROOT_BYTES)
    except NotFoundError:
        return None
    except LimitExceededError:
        raise MetadataLimitError(
            f"{source.config.name}: {ROOT_PATH} is larger than {MAX_ROOT_BYTES} bytes: refused "
            "(endless-data attack?)",
            hint="nothing was installed; tell the registry's maintainers",
        ) from None


def open_registry(
    source: BaseSource, state_root: Path, exp: Expectation, reporter: Reporter | None
) -> Opened:
    name = source.config.name
    latest = latest_root(source, exp)
    if latest is not None:
        from .trust import open_signed  # tuf: only for signed registries

        return open_signed(source, state_root, exp, latest, reporter)
    if exp.expects_signed:
        why = "a trusted root is configured" if exp.root_file else "the lock says it was"
        raise DowngradeError(
            f"{name} serves no signed metadata ({ROOT_PATH}) but is signed ({why}): the "
            "metadata was stripped or the registry replaced (downgrade attack)",
            hint="nothing was installed; do not retry: tell the registry's maintainers (if it "
            "really stopped signing, `ontoskills registry add` it again without --root)",
        )
    if exp.require_signed:
        if not exp.builtin:
            raise UnsignedRegistryError(
                f"{name} is not signed (no {ROOT_PATH}) and signed registries are required",
                hint="sign it (`ontoskills registry init --signed PATH` on the registry), or "
                "drop --require-signed / require_signed",
            )
        if reporter is not None:
            reporter.warn(
                f"{name} (the built-in OntoStore) is not signed yet; require_signed lets it "
                "through until it is"
            )
    return Opened(source, None)
