"""Registry sources: static HTTP(S) sites, local folders and git repositories."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from ..config import RegistryConfig
from ..errors import UsageError
from ..paths import expand_user
from .base import IndexSnapshot, RemoteFile, Source, SourceOptions

__all__ = [
    "IndexSnapshot",
    "RemoteFile",
    "Source",
    "SourceOptions",
    "detect_kind",
    "open_source",
    "slug_for_url",
]

_GIT_HOSTS = {"github.com", "gitlab.com", "codeberg.org", "bitbucket.org"}
_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")


def _is_git_dir(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def detect_kind(url: str) -> str:
    """Guess the source kind from a URL or path; `registry add --kind` overrides it."""
    if url.startswith("git+") or _SCP_RE.match(url) or url.startswith(("ssh://", "git://")):
        return "git"
    bare = url.split("#", 1)[0].rstrip("/")
    if bare.endswith(".git"):
        return "git"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        segments = [s for s in parts.path.split("/") if s]
        if parts.hostname in _GIT_HOSTS and len(segments) == 2:
            return "git"
        return "http"
    local = expand_user(url[len("file://") :] if url.startswith("file://") else url)
    return "git" if _is_git_dir(local) else "folder"


def slug_for_url(url: str) -> str:
    """A short registry name for one-off --registry use: repo or folder name, else host."""
    bare = url.split("#", 1)[0].rstrip("/")
    parts = urlsplit(bare[4:] if bare.startswith("git+") else bare)
    segments = (parts.path if parts.scheme else bare).rstrip("/").split("/")
    if segments[-1] == "index.json":
        segments.pop()
    tail = segments[-1].rsplit(":", 1)[-1] if segments else ""
    if tail.endswith(".git"):
        tail = tail[:-4]
    if not tail and parts.hostname:
        tail = parts.hostname
    slug = re.sub(r"[^a-z0-9._-]+", "-", tail.lower()).strip("-._")
    return slug[:64] or "registry"


def open_source(
    config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
) -> Source:
    """Open a source; `pin` (a git commit) makes a git source read that exact revision."""
    if config.kind == "folder":
        from .folder import FolderSource

        return FolderSource(config, options)
    if config.kind == "http":
        from .http import HttpSource

        return HttpSource(config, options)
    if config.kind == "git":
        from .git import GitSource

        return GitSource(config, options, pin=pin)
    raise UsageError(f"registry {config.name}: unknown kind {config.kind!r}")
