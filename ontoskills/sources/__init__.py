"""Registry sources: static HTTP(S) sites, local folders and git repositories.

The kind table: each `RegistryKind` names the module and class that read it, imported only
when a registry of that kind is opened (pygit2 and httpx cost start-up time). Adding a kind is
one module with a `BaseSource` subclass, one enum member (registries.py) and one detect rule
(`registries.detect_kind`): docs/ARCHITECTURE.md "Adding a registry kind".
"""

from __future__ import annotations

import importlib
import os
import re
import stat
from pathlib import Path

from ..errors import NotFoundError, UsageError
from ..paths import expand_user
from ..registries import RegistryConfig, RegistryKind
from .base import BaseSource, IndexSnapshot, RemoteFile, SourceOptions, not_a_registry

__all__ = [
    "BaseSource",
    "IndexSnapshot",
    "RemoteFile",
    "SourceOptions",
    "check_location",
    "open_source",
    "source_class",
]

KINDS: dict[RegistryKind, tuple[str, str]] = {  # kind -> (module under sources/, class)
    RegistryKind.HTTP: ("http", "HttpSource"),
    RegistryKind.FOLDER: ("folder", "FolderSource"),
    RegistryKind.GIT: ("git", "GitSource"),
    RegistryKind.SKILLS: ("skills", "SkillsSource"),
    RegistryKind.OCI: ("oci", "OciSource"),
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


_TYPES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _what(mode: int) -> str:
    return next((name for test, name in _TYPES if test(mode)), "not a folder")


_SCP = re.compile(r"^[\w.-]+@[\w.-]+:")  # git@host:org/repo.git (registries.detect_kind)


def local_location(config: RegistryConfig) -> Path | None:
    """The folder a registry names on this machine (folder kind, or a local git path), as
    its source reads it; None for a URL."""
    url = config.url
    if config.kind == RegistryKind.HTTP:
        return None
    if config.kind in (RegistryKind.GIT, RegistryKind.SKILLS):  # git+file:///repo#ref
        url = url.split("#", 1)[0].removeprefix("git+")
    if url.startswith("file://"):
        url = url[len("file://") :]
    elif "://" in url or _SCP.match(url):
        return None
    return expand_user(url)


def check_location(config: RegistryConfig) -> None:
    """Refuse a local location that is not a registry before anything reads it, naming the
    registry: a file, /dev/null, /dev/zero, a FIFO or a socket (exit 2), a folder without an
    index.json (exit 2), a path that does not exist (exit 7). Only stat() is used: nothing
    is opened, so a FIFO cannot block and /dev/zero is never read. Every source is opened
    through here (`open_source`), and `registry add` and `publish` call it too."""
    path = local_location(config)
    if path is None:
        return  # a URL: the first read says (sources/http.py, sources/git.py)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if config.kind == RegistryKind.GIT:
            return  # a clone in the cache may still serve it (--offline); git reports it
        raise NotFoundError(
            f"registry {config.name} ({config.url}) does not exist",
            hint="check the path (`ontoskills registry list`, the lock's [registries])",
        ) from None
    except OSError as exc:  # a parent that is a file, a folder we may not enter
        raise not_a_registry(config, exc.strerror or type(exc).__name__) from None
    if not stat.S_ISDIR(st.st_mode):
        raise not_a_registry(config, f"it is {_what(st.st_mode)}, not a folder")
    if config.kind != RegistryKind.FOLDER:
        return  # a local git repository: git itself says if it is one; skills: no index
    try:
        st = os.stat(path / "index.json")
    except FileNotFoundError:
        raise not_a_registry(
            config,
            "a folder with no index.json",
            hint=f"check the path, or create a registry there with "
            f"`ontoskills registry init {config.url}`",
        ) from None
    except OSError as exc:
        raise not_a_registry(config, f"index.json: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise not_a_registry(config, f"its index.json is {_what(st.st_mode)}")


def open_source(
    config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
) -> BaseSource:
    """Open a source; `pin` (a git commit) makes a vcs source read that exact revision.
    A local location that is not a registry is refused here (`check_location`)."""
    try:
        cls = source_class(config.kind)
    except UsageError as exc:
        raise UsageError(f"registry {config.name}: {exc.message}", hint=exc.hint) from None
    check_location(config)
    return cls(config, options, pin=pin)
