"""Media types of skill files, and whether a file is served as text or as a blob.

Decided from the file name only, by a fixed table (then Python's built-in one, never the
machine's /etc/mime.types), so a file has the same type on every host and a directory
listing needs no read. Text types are served as `text` when the bytes are UTF-8 (the host
hashes the text's UTF-8 encoding, which is then exactly the file), else as a base64 blob.
"""

from __future__ import annotations

import mimetypes
from functools import cache

OCTET = "application/octet-stream"
DIRECTORY = "inode/directory"  # SEP-2640: a directory resource

_BY_SUFFIX = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".ttl": "text/turtle",
    ".txt": "text/plain",
    ".rst": "text/x-rst",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".jsx": "text/javascript",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".sql": "application/sql",
    ".r": "text/x-r",
    ".go": "text/x-go",
    ".rs": "text/x-rust",
    ".java": "text/x-java",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cpp": "text/x-c++",
    ".rb": "text/x-ruby",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".env": "text/plain",
    ".tex": "text/x-tex",
}
_BY_NAME = {
    "license": "text/plain",
    "notice": "text/plain",
    "readme": "text/plain",
    "changelog": "text/plain",
    "makefile": "text/plain",
    "dockerfile": "text/plain",
}
_TEXT_APPLICATIONS = {
    "application/json",
    "application/jsonl",
    "application/yaml",
    "application/toml",
    "application/xml",
    "application/sql",
    "application/javascript",
    "application/x-sh",
    "image/svg+xml",
}


@cache
def _builtin() -> mimetypes.MimeTypes:
    return mimetypes.MimeTypes()  # Python's own table only: the same on every machine


def mime_type(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    suffix = name[name.rfind(".") :] if "." in name else ""
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    guessed, _ = _builtin().guess_type(name, strict=False) if suffix else (None, None)
    return guessed or OCTET


def is_text(mime: str) -> bool:
    return (
        mime.startswith("text/")
        or mime in _TEXT_APPLICATIONS
        or mime.endswith(("+json", "+xml", "+yaml"))
    )
