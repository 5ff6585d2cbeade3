"""The file listing a mirror publishes (`ontoskills mirror`, install/mirror.py): static HTTP
cannot list folders, so a package whose package.json has no `files` array would install
only the modules it names (its scripts and references lost). A mirror knows every file it
copied and records it in `mirror.json` at its root; an HTTP source reads that listing here.

The file comes from the server, so it is read like any untrusted JSON: bounded, strict, every
path checked as a package-relative path, counts capped. It only says WHICH files to fetch:
their bytes are verified as every download is (and against the lock on `ci`). A malformed
listing is ignored (the manifest is then all we know, with the usual warning), never trusted
in part."""

from __future__ import annotations

from typing import Any

from .. import jsonio, limits
from ..errors import OntoskillsError, UnsafePathError
from ..safety import check_relpath
from .base import RemoteFile

MIRROR_STATE = "mirror.json"  # install/mirror.py writes it; its "packages" hold the listings
MAX_BYTES = 64 * 1024 * 1024


def parse_listing(data: bytes, source: str) -> dict[str, RemoteFile] | None:
    """registry-relative path -> the file, from a mirror's state; None when malformed."""
    try:
        state = jsonio.loads(data, source=source, max_bytes=MAX_BYTES)
        return _listing(state)
    except (OntoskillsError, ValueError, TypeError):
        return None


def _listing(state: Any) -> dict[str, RemoteFile] | None:
    if not isinstance(state, dict) or state.get("format") != 1:
        return None
    packages = state.get("packages")
    if not isinstance(packages, dict):
        return None
    out: dict[str, RemoteFile] = {}
    for rec in packages.values():
        sizes = rec.get("sizes") if isinstance(rec, dict) else None
        if not isinstance(sizes, dict) or len(sizes) > limits.MAX_PACKAGE_FILES:
            return None  # a mirror older than the listing, or not ours
        executable = rec.get("executable", [])
        if not isinstance(executable, list):
            return None
        for path, size in sizes.items():
            if type(size) is not int or size < 0:
                return None
            try:
                check_relpath(path, "mirror listing path")
            except UnsafePathError:
                return None
            out[path] = RemoteFile(path, size, path in executable)
    return out


def package_files(listing: dict[str, RemoteFile], package_root: str) -> list[RemoteFile] | None:
    """The listed files under `package_root`, relative to it; None when it lists none."""
    prefix = f"{package_root.strip('/')}/" if package_root.strip("/") else ""
    found = [
        RemoteFile(path[len(prefix) :], f.size, f.executable)
        for path, f in sorted(listing.items())
        if path.startswith(prefix)
    ]
    return found or None
