"""Where things live: the home (installed tree + machine state) and the download cache.

The home layout is compatible with the reference tooling, so existing OntoSkills MCP servers
can read what we install:

    $ONTOSKILLS_HOME/                      (default ~/.ontoskills)
      ontologies/author/<author>/<pkg>/    packages, byte for byte as published
      ontologies/system/embeddings/        model.onnx + tokenizer.json
      ontologies/<anything else>/          local skills (ontoskill.ttl), tier "local"
      ontoskills.lock                      default lockfile
      config.toml                          registries and settings
      state/                               machine state: process lock, derived data, journal
      .staging/                            install transactions (same filesystem as the tree)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from .errors import UsageError
from .fsutil import guard_root

ENV_HOME = "ONTOSKILLS_HOME"
ENV_CACHE = "ONTOSKILLS_CACHE_DIR"
ENV_LOCKFILE = "ONTOSKILLS_LOCKFILE"
LOCKFILE_NAME = "ontoskills.lock"


def expand_user(raw: str | os.PathLike[str]) -> Path:
    """Path.expanduser() that turns an unknown `~user` into a usage error, not a traceback."""
    try:
        return Path(raw).expanduser()
    except RuntimeError:
        raise UsageError(
            f"cannot expand {str(raw)!r}: no such user", hint="use an absolute path"
        ) from None


def _absolute(raw: str | os.PathLike[str]) -> Path:
    """Absolute and normalised (`--home ../h` is `/x/h`): paths we record (the journal's
    lockfile, mcp-config's arguments) and compare must not depend on how they were typed."""
    return Path(os.path.abspath(expand_user(raw)))


@dataclass(frozen=True)
class Home:
    """The home. Every folder in it is untrusted input: a symlink planted at any of them is
    refused by fsutil's write/remove primitives (see fsutil: guarded roots)."""

    root: Path

    def __post_init__(self) -> None:
        guard_root(self.root)

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Home:
        raw = explicit or os.environ.get(ENV_HOME) or Path.home() / ".ontoskills"
        return cls(_absolute(raw))

    @property
    def ontologies(self) -> Path:
        return self.root / "ontologies"

    @property
    def author_dir(self) -> Path:
        return self.ontologies / "author"

    @property
    def system_dir(self) -> Path:
        return self.ontologies / "system"

    @property
    def embeddings_dir(self) -> Path:
        return self.system_dir / "embeddings"

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def default_lockfile(self) -> Path:
        return self.root / LOCKFILE_NAME

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def process_lock(self) -> Path:
        return self.state_dir / "home.lock"

    @property
    def derived_dir(self) -> Path:
        """Data we compute from verified files (vectors, search index); never verified content."""
        return self.state_dir / "derived"

    @property
    def staging_dir(self) -> Path:
        return self.root / ".staging"

    def package_dir(self, package_id: str) -> Path:
        author, name = package_id.split("/", 1)
        return self.author_dir / author / name

    def lockfile(self, explicit: str | os.PathLike[str] | None = None) -> Path:
        raw = explicit or os.environ.get(ENV_LOCKFILE)
        return _absolute(raw) if raw else self.default_lockfile


@dataclass(frozen=True)
class Cache:
    """Content-addressed download cache, safe to delete at any time."""

    root: Path

    def __post_init__(self) -> None:
        guard_root(self.root)

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Cache:
        raw = explicit or os.environ.get(ENV_CACHE) or platformdirs.user_cache_dir("ontoskills")
        return cls(_absolute(raw))

    @property
    def blobs(self) -> Path:
        return self.root / "blobs" / "sha256"

    def blob(self, sha256: str) -> Path:
        return self.blobs / sha256[:2] / sha256

    @property
    def http_dir(self) -> Path:
        """Per-URL metadata (ETag, body digest) for revalidation and offline use."""
        return self.root / "http"

    @property
    def git_dir(self) -> Path:
        return self.root / "git"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"
