"""Registry sources: static HTTP(S) sites, local folders and git repositories."""

from __future__ import annotations

from ..errors import UsageError
from ..registries import RegistryConfig, RegistryKind
from .base import IndexSnapshot, RemoteFile, Source, SourceOptions

__all__ = [
    "IndexSnapshot",
    "RemoteFile",
    "Source",
    "SourceOptions",
    "open_source",
]


def open_source(
    config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
) -> Source:
    """Open a source; `pin` (a git commit) makes a git source read that exact revision."""
    if config.kind == RegistryKind.FOLDER:
        from .folder import FolderSource

        return FolderSource(config, options)
    if config.kind == RegistryKind.HTTP:
        from .http import HttpSource

        return HttpSource(config, options)
    if config.kind == RegistryKind.GIT:
        from .git import GitSource

        return GitSource(config, options, pin=pin)
    raise UsageError(f"registry {config.name}: unknown kind {config.kind!r}")
