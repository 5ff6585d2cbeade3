"""Registry sources: static HTTP(S) sites, local folders and git repositories.

The kind table: each `RegistryKind` names the module and class that read it, imported only
when a registry of that kind is opened (pygit2 and httpx cost start-up time). Adding a kind is
one module with a `BaseSource` subclass, one enum member (registries.py) and one detect rule
(`registries.detect_kind`): docs/ARCHITECTURE.md "Adding a registry kind".
"""

from __future__ import annotations

import importlib

from ..errors import UsageError
from ..registries import RegistryConfig, RegistryKind
from .base import BaseSource, IndexSnapshot, RemoteFile, SourceOptions

__all__ = [
    "BaseSource",
    "IndexSnapshot",
    "RemoteFile",
    "SourceOptions",
    "open_source",
    "source_class",
]

KINDS: dict[RegistryKind, tuple[str, str]] = {  # kind -> (module under sources/, class)
    RegistryKind.HTTP: ("http", "HttpSource"),
    RegistryKind.FOLDER: ("folder", "FolderSource"),
    RegistryKind.GIT: ("git", "GitSource"),
}


def source_class(kind: RegistryKind | str) -> type[BaseSource]:
    """The class that reads registries of `kind` (its module imported on first use)."""
    member = RegistryKind.get(kind)
    if member is None or member not in KINDS:
        raise UsageError(
            f"unknown registry kind {str(kind)[:40]!r}", hint=f"use one of {RegistryKind.listed()}"
        )
    module, name = KINDS[member]
    cls: type[BaseSource] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return cls


def open_source(
    config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
) -> BaseSource:
    """Open a source; `pin` (a git commit) makes a vcs source read that exact revision."""
    try:
        cls = source_class(config.kind)
    except UsageError as exc:
        raise UsageError(f"registry {config.name}: {exc.message}", hint=exc.hint) from None
    return cls(config, options, pin=pin)
