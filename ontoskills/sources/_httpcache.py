"""What each URL of an HTTP registry served last time: its validators and body digest.

One small JSON file per URL under `cache.http_dir` (ETag, Last-Modified, sha256, size); the
body itself is a blob of the content-addressed cache. The next run revalidates (304) instead
of downloading, and --offline answers from it alone. The files are read back as derived
data (anyone may edit a cache folder): anything odd means "not cached".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import httpx

from .. import asciinum, jsonio
from ..paths import Cache


@dataclass(frozen=True)
class Meta:
    etag: str | None
    last_modified: str | None
    sha256: str
    size: int


class MetaCache:
    """The per-URL records of one cache, and the blobs they name."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def _path(self, url: str) -> Path:
        return self.cache.http_dir / (hashlib.sha256(url.encode()).hexdigest() + ".json")

    def load(self, url: str) -> Meta | None:
        try:
            raw = jsonio.loads_derived(self._path(url).read_bytes())
            size = asciinum.json_uint(raw["size"])
            if size is None:
                return None
            return Meta(raw.get("etag"), raw.get("last_modified"), raw["sha256"], size)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, url: str, resp: httpx.Response, sha: str, size: int) -> None:
        # Saved even without validators: --offline still needs to know what this URL served.
        etag, modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
        data = {"url": url, "etag": etag, "last_modified": modified, "sha256": sha, "size": size}
        self.cache.write(self._path(url), json.dumps(data).encode())

    def cached(self, url: str) -> Meta | None:
        """What this URL served last time, if its blob is still in the cache."""
        meta = self.load(url)
        if meta is None or not self.cache.blob(meta.sha256).is_file():
            return None
        return meta

    def read(self, meta: Meta | None) -> bytes | None:
        return None if meta is None else self.cache.read_blob(meta.sha256)

    def copy(self, meta: Meta | None, dest: Path) -> tuple[str, int] | None:
        size = None if meta is None else self.cache.copy_blob(meta.sha256, dest)
        return None if meta is None or size is None else (meta.sha256, size)


def conditional(meta: Meta | None) -> dict[str, str]:
    """The revalidation headers for what a URL served last time."""
    if meta is None:
        return {}
    headers = {}
    # Validators are the server's header values sent back: only visible ASCII, else a
    # stored `ETag: "é"` made every later run an internal error (UnicodeEncodeError).
    if meta.etag and _header_value(meta.etag):
        headers["If-None-Match"] = meta.etag
    if meta.last_modified and _header_value(meta.last_modified):
        headers["If-Modified-Since"] = meta.last_modified
    return headers


def _header_value(value: object) -> bool:
    return isinstance(value, str) and len(value) < 1024 and all(" " <= c <= "~" for c in value)
