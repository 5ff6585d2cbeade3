"""Clients' side: `tuf.ngclient.Updater` over OUR sources, and a BaseSource that verifies.

`SourceFetcher` hands every metadata download to the registry's `BaseSource` (folder, HTTP, git),
so retries, the command's network deadline, tokens, the HTTP cache and `--offline` apply as
for any other registry file, and a git registry is read at the one commit the command
resolved. `VerifiedSource` wraps that same source: index.json, sparse entries, manifests and
package files are compared with their signed target (length + sha256) before anyone uses
them. ngclient's exceptions become our errors, one class per attack (errors.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout
from tuf.api import exceptions as tufx
from tuf.api.metadata import Metadata, Root, TargetFile
from tuf.ngclient import Updater, UpdaterConfig
from tuf.ngclient.fetcher import FetcherInterface

from .. import envvars, limits
from ..errors import (
    AuthError,
    BusyError,
    FreezeError,
    LimitExceededError,
    MetadataLimitError,
    MixAndMatchError,
    NetworkError,
    NotFoundError,
    OntoskillsError,
    RollbackError,
    RootChainError,
    SignatureError,
    TargetMismatchError,
    ThresholdError,
)
from ..fsutil import check_path, make_dirs
from ..progress import Reporter
from ..sources import BaseSource, RemoteFile
from . import (
    MAX_ROOT_BYTES,
    MAX_SNAPSHOT_BYTES,
    MAX_TARGETS_BYTES,
    MAX_TIMESTAMP_BYTES,
    METADATA_DIR,
    is_metadata_path,
)

PREFIX = "ontoskills-registry:///"
CONFIG = UpdaterConfig(
    max_root_rotations=64,
    root_max_length=MAX_ROOT_BYTES,
    timestamp_max_length=MAX_TIMESTAMP_BYTES,
    snapshot_max_length=MAX_SNAPSHOT_BYTES,
    targets_max_length=MAX_TARGETS_BYTES,
    prefix_targets_with_hash=False,
)
_ROOT_VERSION = re.compile(r"^metadata/[0-9]+\.root\.json$")


class _TooLarge(tufx.DownloadLengthMismatchError):
    def __init__(self, relpath: str, limit: int) -> None:
        super().__init__(f"{relpath} exceeds {limit} bytes")
        self.relpath = relpath
        self.limit = limit


class SourceFetcher(FetcherInterface):
    """ngclient's downloads as `BaseSource.read` calls (bounded by ngclient's length)."""

    def __init__(self, source: BaseSource) -> None:
        self.source = source
        self.last = ""  # the metadata file read last: errors name it

    def _relpath(self, url: str) -> str:
        if not url.startswith(PREFIX):
            raise tufx.DownloadError(f"unexpected URL {url!r}")
        return url[len(PREFIX) :]

    def _fetch(self, url: str) -> Iterator[bytes]:
        yield self.download_bytes(url, limits.MAX_FILE_BYTES)

    def download_bytes(self, url: str, max_length: int) -> bytes:
        rel = self._relpath(url)
        self.last = rel
        try:
            return self.source.read(rel, max_bytes=max_length)
        except NotFoundError as exc:
            # 404 for the next root version ends the rotation walk; for another file it is
            # missing metadata (a SignatureError once translated).
            raise tufx.DownloadHTTPError(str(exc), 404) from None
        except AuthError as exc:
            if _ROOT_VERSION.match(rel):  # S3 answers 403 for a missing key
                raise tufx.DownloadHTTPError(str(exc), 403) from None
            raise  # refused credentials stay exit 6
        except LimitExceededError:
            raise _TooLarge(rel, max_length) from None
        except NetworkError:
            offline = getattr(getattr(self.source, "options", None), "offline", False)
            if offline and _ROOT_VERSION.match(rel):
                raise tufx.DownloadHTTPError(f"{rel} is not cached", 404) from None
            raise  # a real network failure keeps its own error (exit 5)


def _role(relpath: str) -> str:
    name = relpath.rsplit("/", 1)[-1].removesuffix(".json")
    return "root" if name.endswith("root") else name


def translate(exc: Exception, registry: str, relpath: str) -> OntoskillsError:
    """ngclient's verdict as one of our errors: a message per attack class, a hint each."""
    where = f"{registry}: {relpath or METADATA_DIR}"
    detail = str(exc) or type(exc).__name__
    nothing = "nothing was installed or changed"
    if isinstance(exc, tufx.DownloadLengthMismatchError):
        limit = exc.limit if isinstance(exc, _TooLarge) else "its"
        return MetadataLimitError(
            f"{where} is larger than {limit} bytes: refused (endless-data attack?)",
            hint=f"{nothing}; the registry serves oversized metadata: tell its maintainers",
        )
    if isinstance(exc, tufx.ExpiredMetadataError):
        return FreezeError(
            f"{where}: signed metadata expired ({detail}): the registry stopped refreshing "
            "it, or someone replays old metadata (freeze attack)",
            hint=f"{nothing}; retry later; if it persists, its maintainers must refresh it "
            "with `ontoskills registry sign --timestamp` (a scheduled job)",
        )
    if isinstance(exc, tufx.UnsignedMetadataError):
        if _role(relpath) == "root":
            return RootChainError(
                f"{where}: the new root is not signed by the threshold of the trusted root's "
                f"keys ({detail}): a key rotation that did not reach the threshold",
                hint=f"{nothing}; a legitimate rotation is signed by the previous root's "
                "threshold: tell the registry's maintainers",
            )
        return ThresholdError(
            f"{where} is not signed by the threshold of {_role(relpath)} keys ({detail}): "
            "tampered, or signed by a key it does not trust (one compromised key?)",
            hint=f"{nothing}; tell the registry's maintainers",
        )
    if isinstance(exc, tufx.BadVersionNumberError):
        text = str(exc)
        if "root version" in text:
            return RootChainError(f"{where}: {detail}", hint=nothing)
        if "must be >=" in text or re.search(r"\.json version [0-9]+, got [0-9]+", text):
            return RollbackError(
                f"{where} is older than what this machine already trusts ({detail}): a "
                "rollback, or a mirror serving old metadata",
                hint=f"{nothing}; use the registry's primary location, or wait for the "
                "mirror to catch up",
            )
        return _mix(where, detail, nothing)
    if isinstance(exc, tufx.LengthOrHashMismatchError):
        return _mix(where, detail, nothing)
    if isinstance(exc, tufx.RepositoryError):
        if "missing info" in str(exc):
            return RollbackError(f"{where}: {detail} (metadata removed: a rollback?)", hint=nothing)
        if "does not contain information" in str(exc):
            return _mix(where, detail, nothing)
        return SignatureError(f"{where}: invalid signed metadata ({detail})", hint=nothing)
    if isinstance(exc, tufx.DownloadError):
        return SignatureError(f"{where}: {detail}", hint=nothing)
    return SignatureError(f"{where}: {type(exc).__name__}: {detail}", hint=nothing)


def _mix(where: str, detail: str, nothing: str) -> MixAndMatchError:
    return MixAndMatchError(
        f"{where} does not match the metadata that names it ({detail}): files from different "
        "states of the registry (mix-and-match)",
        hint=f"{nothing}; do not trust this registry until its maintainers check it (a "
        "static host caught mid-upload is the one benign cause)",
    )


class SignedRegistry:
    """One registry's verified metadata for one command (ngclient + our fetcher)."""

    def __init__(self, source: BaseSource, state_dir: Path, anchor: bytes) -> None:
        self.source = source
        self.name = source.config.name
        self.state_dir = state_dir
        make_dirs(state_dir)  # never through a symlinked folder of the home
        check_path(state_dir / "root_history")
        self.fetcher = SourceFetcher(source)
        self._lock = threading.Lock()
        self._targets: dict[str, TargetFile | None] = {}
        # One process at a time updates this state (held until close(): a command is short,
        # and the home lock already serializes installs).
        self._file_lock = FileLock(str(state_dir) + ".lock")
        try:
            self._file_lock.acquire(timeout=envvars.get(envvars.LOCK_TIMEOUT))
        except Timeout:
            raise BusyError(
                f"another ontoskills process is updating the signed metadata of {self.name}",
                hint="wait for it, or raise ONTOSKILLS_LOCK_TIMEOUT",
            ) from None
        with self._guard("metadata/root.json"):
            self.updater = Updater(
                metadata_dir=str(state_dir),
                metadata_base_url=PREFIX + METADATA_DIR + "/",
                fetcher=self.fetcher,
                config=CONFIG,
                bootstrap=anchor,
            )

    def _guard(self, what: str) -> _Guard:
        return _Guard(self, what)

    def refresh(self) -> None:
        with self._guard(""):
            self.updater.refresh()

    def target(self, relpath: str) -> TargetFile | None:
        if relpath not in self._targets:
            with self._guard(""):
                self._targets[relpath] = self.updater.get_targetinfo(relpath)
        return self._targets[relpath]

    def close(self) -> None:
        if self._file_lock.is_locked:
            self._file_lock.release(force=True)

    def trusted_root(self) -> Metadata[Root]:
        """The newest root ngclient verified (root.json links to it in the state dir)."""
        return Metadata[Root].from_bytes((self.state_dir / "root.json").read_bytes())

    def verified_roots(self) -> list[Metadata[Root]]:
        """Every root of the chain this state has verified (the anchor onwards)."""
        out = []
        for path in sorted((self.state_dir / "root_history").glob("*.root.json")):
            out.append(Metadata[Root].from_bytes(path.read_bytes()))
        return sorted(out, key=lambda m: m.signed.version)


class _Guard:
    """One ngclient call at a time (threads); its exceptions translated, ours (network,
    auth, deadline) passed through."""

    def __init__(self, reg: SignedRegistry, what: str) -> None:
        self.reg = reg
        self.what = what

    def __enter__(self) -> None:
        self.reg._lock.acquire()

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self.reg._lock.release()
        if exc is None or isinstance(exc, (OntoskillsError, KeyboardInterrupt)):
            return
        if isinstance(exc, OSError) and not isinstance(exc, tufx.DownloadError):
            return  # the state dir: a disk problem, reported as such by the CLI
        if isinstance(exc, (tufx.RepositoryError, tufx.DownloadError, ValueError)):
            raise translate(exc, self.reg.name, self.reg.fetcher.last or self.what) from None


def check_target(registry: str, relpath: str, target: TargetFile, sha256: str, size: int) -> None:
    want = target.hashes.get("sha256")
    if want is None or size != target.length or sha256 != want:
        raise TargetMismatchError(
            f"{registry}: {relpath} is not the signed file (sha256 {sha256[:12]}…, {size} bytes; "
            f"signed: {(want or 'no sha256')[:12]}…, {target.length} bytes): tampered",
            hint="nothing was installed; the registry's files differ from what its maintainers "
            "signed: tell them",
        )


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


class VerifiedSource(BaseSource):
    """A source whose every file is checked against the registry's signed targets; it can do
    what its inner source can."""

    def __init__(
        self, inner: BaseSource, signed: SignedRegistry, reporter: Reporter | None
    ) -> None:
        super().__init__(inner.config, inner.options)
        self.inner = inner
        self.signed = signed
        self.kind = inner.kind
        self.parallel_fetch = inner.parallel_fetch
        self.vcs = inner.vcs
        self.is_local = inner.is_local
        self.reporter = reporter

    @property
    def commit(self) -> str | None:
        return self.inner.commit

    def target(self, relpath: str) -> TargetFile | None:
        return None if is_metadata_path(relpath) else self.signed.target(relpath)

    def require(self, relpath: str) -> TargetFile:
        target = self.target(relpath)
        if target is None:
            raise NotFoundError(
                f"{self.config.name}: {relpath} is not a signed target of the registry",
                hint="a signed registry serves only what its metadata lists",
            )
        return target

    def expect(self, relpath: str, sha256: str | None, size: int | None) -> tuple[str, int]:
        """The signed (sha256, length) of a file a plan will fetch; a manifest hash that
        disagrees with the signed one is refused before anything is downloaded."""
        target = self.target(relpath)
        want = None if target is None else target.hashes.get("sha256")
        if target is None or want is None:
            raise TargetMismatchError(
                f"{self.config.name}: {relpath} is listed by its manifest but is not a signed "
                "target of the registry",
                hint="nothing was installed; the registry's files differ from what its "
                "maintainers signed: tell them",
            )
        if (sha256 is not None and sha256 != want) or (size is not None and size != target.length):
            raise TargetMismatchError(
                f"{self.config.name}: {relpath}: the manifest says sha256 {(sha256 or '?')[:12]}…, "
                f"the signed target {want[:12]}…: tampered",
                hint="nothing was installed; tell the registry's maintainers",
            )
        return want, target.length

    def _checked(self, relpath: str, data: bytes, target: TargetFile) -> bytes:
        check_target(self.config.name, relpath, target, _sha256(data), len(data))
        return data

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        target = self.require(relpath)
        try:
            data = self.inner.read(relpath, max_bytes=min(max_bytes, target.length))
        except LimitExceededError:
            raise self._oversize(relpath, target) from None
        return self._checked(relpath, data, target)

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        target = self.target(relpath)
        if target is None:
            return None  # unsigned: as if absent (an unsigned sparse config is not used)
        data = self.inner.probe(relpath, max_bytes=min(max_bytes, target.length))
        return None if data is None else self._checked(relpath, data, target)

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        target = self.require(relpath)
        try:
            sha, size = self.inner.fetch_to(relpath, dest, max_bytes=min(max_bytes, target.length))
        except LimitExceededError:
            raise self._oversize(relpath, target) from None
        check_target(self.config.name, relpath, target, sha, size)
        return sha, size

    def _oversize(self, relpath: str, target: TargetFile) -> TargetMismatchError:
        return TargetMismatchError(
            f"{self.config.name}: {relpath} is larger than its signed length {target.length}: "
            "tampered",
            hint="nothing was installed; tell the registry's maintainers",
        )

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        """The package's files that are signed targets; others are left out (said once)."""
        listing = self.inner.list_package(package_root)
        if listing is None:
            return None
        kept = [f for f in listing if self.target(f"{package_root}/{f.path}") is not None]
        dropped = sorted(f.path for f in listing if f not in kept)
        if dropped and self.reporter is not None:
            self.reporter.warn(
                f"{self.config.name}: {package_root} holds {len(dropped)} file(s) no signed "
                f"target lists ({', '.join(dropped[:3])}{', ...' if len(dropped) > 3 else ''}); "
                "they are not installed"
            )
        return kept

    def close(self) -> None:
        self.signed.close()
        self.inner.close()
