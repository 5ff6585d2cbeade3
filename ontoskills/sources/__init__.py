"""Registry sources: static HTTP(S) sites, local folders and git repositories."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import NotFoundError, UsageError
from ..paths import expand_user
from ..registries import RegistryConfig, RegistryKind
from .base import IndexSnapshot, RemoteFile, Source, SourceOptions, not_a_registry

__all__ = [
    "IndexSnapshot",
    "RemoteFile",
    "Source",
    "SourceOptions",
    "check_location",
    "open_source",
]

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
    if config.kind == RegistryKind.GIT:  # git+file:///repo#ref, /repo#ref
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
        return  # a local git repository: git itself says if it is one
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
) -> Source:
    """Open a source; `pin` (a git commit) makes a git source read that exact revision.
    A local location that is not a registry is refused here (`check_location`)."""
    check_location(config)
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
