"""The one small interface every registry source implements (http, folder, git).

A source reads registry-relative paths ("index.json", "packages/a/b/package.json", ...).
It knows nothing about installs, lockfiles or the home: the installer composes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..manifest import RegistryIndex
from ..paths import Cache
from ..progress import Reporter
from ..registries import RegistryConfig
from ._auth import Origin
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
    # Origins ONTOSKILLS_TOKEN may be sent to (`_auth.token_origins`: the configured
    # registries' and ONTOSKILLS_TOKEN_FOR's; commands/_context.py); empty: none at all.
    token_origins: frozenset[Origin] = frozenset()
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
