"""The one small interface every registry source implements (http, folder, git).

A source reads registry-relative paths ("index.json", "packages/a/b/package.json", ...).
It knows nothing about installs, lockfiles or the home: the installer composes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from ..errors import UsageError
from ..manifest import RegistryIndex, parse_index
from ..paths import Cache
from ..progress import Reporter
from ..registries import RegistryConfig
from ._retry import Deadline


@dataclass(frozen=True)
class RemoteFile:
    """One file of a package as listed by a source that can list folders."""

    path: str  # relative to the package root, POSIX
    size: int
    executable: bool


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
    # One budget for the whole command's network work (shared by its sources and threads);
    # None: each request only has its own timeouts (library use, tests).
    deadline: Deadline | None = None
    reporter: Reporter | None = None  # retry warnings ("retrying ... in 2.0 s (...)")


class Source(Protocol):
    config: RegistryConfig
    is_local: bool  # True when reads never touch the network (folder, local git)

    def load_index(self) -> IndexSnapshot:
        """Fetch (or revalidate) and parse index.json; pins the revision for later reads."""
        ...

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        """Whole content of a small registry file (manifest, index)."""
        ...

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        """Stream a registry file to dest; return (sha256, size). Never exceeds max_bytes."""
        ...

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        """An optional file (e.g. the sparse index config): its content, or None when it is
        absent or not served cleanly. One attempt, no retries: a miss must stay cheap."""
        ...

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        """Every file under a package folder, or None when the source cannot list (HTTP)."""
        ...

    def close(self) -> None: ...


_LEADING = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*")  # a BOM, then JSON whitespace

NOT_A_REGISTRY_HINT = (
    "a registry is a folder or git repository holding an index.json, or an http(s) URL "
    "serving one: check --registry, `ontoskills registry list` and the lock's [registries]"
)


def not_a_registry(config: RegistryConfig, why: str, *, hint: str | None = None) -> UsageError:
    """Exit 2 naming the registry and its location: the location is not a registry at all
    (not 4, which says a registry's maintainers published something malformed)."""
    where = config.url
    if "://" in where:  # no userinfo, query or fragment: they may carry secrets
        parts = urlsplit(where)
        host = parts.netloc.rsplit("@", 1)[-1]
        where = f"{parts.scheme}://{host}{parts.path}"
    return UsageError(
        f"registry {config.name} ({where}) is not a registry: {why}",
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
