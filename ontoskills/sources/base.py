"""The base class every registry source derives from (http, folder, git).

A source reads registry-relative paths ("index.json", "packages/a/b/package.json", ...).
It knows nothing about installs, lockfiles or the home: the installer composes it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import limits
from ..errors import NotFoundError, UsageError
from ..manifest import RegistryIndex, parse_index
from ..paths import Cache
from ..progress import Reporter
from ..redact import redact_url
from ..registries import RegistryConfig, RegistryKind
from ._auth import Origin
from ._retry import Deadline


@dataclass(frozen=True)
class RemoteFile:
    """One file of a package as listed by a source that can list folders."""

    path: str  # relative to the package root, POSIX
    size: int
    executable: bool


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a whole repository's tree (the skills kind scans it): `kind` is "file",
    "link" or "other" (a submodule, a device); links are reported, never followed."""

    path: str
    kind: str
    size: int = 0
    executable: bool = False


@dataclass(frozen=True)
class IndexSnapshot:
    index: RegistryIndex
    sha256: str  # of the index.json bytes
    commit: str | None = None  # git sources: the resolved commit everything is read from


@dataclass(frozen=True)
class SourceOptions:
    cache: Cache
    offline: bool = False
    allow_insecure_http: bool = False
    timeout: float = 30.0
    retries: int = 4
    parallel: int = 8
    env: dict[str, str] = field(default_factory=dict)  # for tokens; empty means os.environ
    # Origins ONTOSKILLS_TOKEN may be sent to (`_auth.token_origins`: the configured
    # registries' and ONTOSKILLS_TOKEN_FOR's; commands/_context.py); empty: none at all.
    token_origins: frozenset[Origin] = frozenset()
    # One budget for the whole command's network work (shared by its sources and threads);
    # None: each request only has its own timeouts (library use, tests).
    deadline: Deadline | None = None
    reporter: Reporter | None = None  # retry warnings ("retrying ... in 2.0 s (...)")


class BaseSource:
    """What every registry source is (model: httpx's transport base class). A kind is one
    module with one subclass (sources/__init__.py maps each `RegistryKind` to it); a subclass
    implements `read` and `fetch_to`, and overrides the rest only where it differs.

    Callers ask a source what it can do (`parallel_fetch`, `vcs`, `is_local`, `commit`) and
    never test its kind by name.
    """

    # What the kind can do: class attributes of each kind (a wrapper, such as the signed
    # registries' VerifiedSource, takes its inner source's).
    kind: RegistryKind
    parallel_fetch: bool = False  # files may be fetched by several threads at once
    vcs: bool = False  # a version-control repository: a commit pins what is read
    is_local: bool = False  # reads never touch the network (folder, local git)

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        """`pin`: the revision every read uses (a git commit; unused by other kinds)."""
        self.config = config
        self.options = options

    @property
    def commit(self) -> str | None:
        """The revision reads come from (vcs sources), else None."""
        return None

    def load_index(self) -> IndexSnapshot:
        """Fetch (or revalidate) and parse index.json; pins the revision for later reads."""
        data = self.read("index.json", max_bytes=limits.MAX_INDEX_BYTES)
        index = parse_registry_index(self.config, data)
        return IndexSnapshot(
            index=index, sha256=hashlib.sha256(data).hexdigest(), commit=self.commit
        )

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        """Whole content of a small registry file (manifest, index)."""
        raise NotImplementedError

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        """Stream a registry file to dest; return (sha256, size). Never exceeds max_bytes."""
        raise NotImplementedError

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        """An optional file (e.g. the sparse index config): its content, or None when it is
        absent or not served cleanly. One attempt, no retries: a miss must stay cheap."""
        try:
            return self.read(relpath, max_bytes=max_bytes)
        except NotFoundError:
            return None

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        """Every file under a package folder, or None when the source cannot list (HTTP)."""
        return None

    def close(self) -> None:
        """Release connections; a source is never reopened behind close()."""


_LEADING = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*")  # a BOM, then JSON whitespace

NOT_A_REGISTRY_HINT = (
    "a registry is a folder or git repository holding an index.json, or an http(s) URL "
    "serving one: check --registry, `ontoskills registry list` and the lock's [registries]"
)


def not_a_registry(config: RegistryConfig, why: str, *, hint: str | None = None) -> UsageError:
    """Exit 2 naming the registry and its location: the location is not a registry at all
    (not 4, which says a registry's maintainers published something malformed)."""
    return UsageError(
        f"registry {config.name} ({redact_url(config.url)}) is not a registry: {why}",
        hint=hint or NOT_A_REGISTRY_HINT,
    )


def parse_registry_index(config: RegistryConfig, data: bytes) -> RegistryIndex:
    """index.json as every source reads it: bytes that cannot begin a JSON object (an HTML
    page, a binary file, nothing at all) mean the location is not a registry (exit 2),
    before the strict parser would call a malformed registry what is none."""
    start = _LEADING.match(data)
    head = data[start.end() : start.end() + 1] if start else b""
    if head != b"{":
        what = "an HTML page" if head == b"<" else "empty" if not head else "not JSON"
        raise not_a_registry(config, f"its index.json is {what}")
    return parse_index(data, source=f"{config.name}: index.json")
