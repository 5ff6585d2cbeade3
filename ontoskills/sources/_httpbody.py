"""An HTTP response body streamed to a sink, bounded: the one body reader of `http.py`.

The decoded bytes are counted against max_bytes (a declared Content-Length over it is refused
before reading; gzip and deflate are inflated at most `CHUNK` at a time, so a bomb cannot
flood memory), hashed as they pass, and a transfer slower than `MIN_RATE` after a grace
period is cut. What may succeed on a second try (a cut or corrupt body, a stalled transfer)
raises `Retryable`, which the caller's retry loop handles.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable

import httpx

from .. import asciinum
from ..errors import FormatError, LimitExceededError
from ..fsutil import CHUNK

MIN_RATE = 1024  # bytes/s averaged over a transfer, enforced after 2x the read timeout


class Retryable(Exception):
    """A response we may retry: a 429/5xx status or a body cut short."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _decoder(resp: httpx.Response, host: str) -> zlib._Decompress | None:
    encoding = resp.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    if encoding not in ("", "identity"):
        raise FormatError(f"{host}: unsupported Content-Encoding {encoding!r}")
    return None


def stream_body(
    resp: httpx.Response,
    sink: Callable[[bytes], object],
    max_bytes: int,
    *,
    what: str,
    host: str,
    grace: float,
    check: Callable[[], None],
) -> tuple[str, int]:
    """Feed the decoded body to sink; return (sha256, size). Never beyond max_bytes.

    `what` names the file in errors ("<registry>: <relpath>"); `check` runs before each
    chunk (it raises to stop: Ctrl-C, the command's deadline)."""
    decoder = _decoder(resp, host)
    if decoder is None:
        length = resp.headers.get("Content-Length", "")
        declared = asciinum.uint(length, limit=max_bytes)  # None: not a length, read on
        if declared is not None and declared > max_bytes:
            raise LimitExceededError(f"{what} is {length} bytes, over the {max_bytes} limit")
    h = hashlib.sha256()
    size = 0
    start = time.monotonic()

    def emit(data: bytes) -> None:
        nonlocal size
        if not data:
            return
        size += len(data)
        if size > max_bytes:  # the header lied, or the body inflates too far
            raise LimitExceededError(f"{what} exceeds {max_bytes} bytes")
        h.update(data)
        sink(data)

    received = 0
    for raw in resp.iter_raw():  # as received: a chunk_size would buffer up to it
        check()
        received += len(raw)
        elapsed = time.monotonic() - start
        # A server dripping a byte just inside the read timeout would hold us forever.
        if elapsed > grace and received / elapsed < MIN_RATE:
            raise Retryable(f"transfer slower than {MIN_RATE} B/s")
        if decoder is None:
            emit(raw)
            continue
        data = raw
        while data:  # inflate at most CHUNK at a time: a gzip bomb cannot flood memory
            emit(_inflate(decoder, data))
            data = decoder.unconsumed_tail
    if decoder is not None:
        while out := _inflate(decoder, b""):
            emit(out)
        if not decoder.eof:
            raise Retryable("truncated compressed body")
        emit(decoder.flush())
    return h.hexdigest(), size


def _inflate(decoder: zlib._Decompress, data: bytes) -> bytes:
    try:
        return decoder.decompress(data, CHUNK)
    except zlib.error:  # a body that claims gzip but is not: like a cut transfer, retry it
        raise Retryable("corrupt compressed body") from None
