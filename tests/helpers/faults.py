"""A loopback HTTP server that serves a folder and misbehaves on request.

Real sockets, real HTTP/1.1 (keep-alive, ETag/If-None-Match, optional gzip), plus faults
queued per path pattern: status storms with Retry-After, dropped connections, stalls,
truncated bodies, slow drip-fed bodies and redirects to another server. Every request is
recorded with its headers so tests can assert what the client sent (tokens included).

    with FaultServer(registry_dir) as srv:
        srv.storm(r"index\\.json$", 503, times=2, retry_after="0")
        srv.fail(r"\\.ttl$", Fault("truncate"))
        url = srv.url            # "http://127.0.0.1:PORT/"
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.server
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit


@dataclass
class Fault:
    """What to do instead of a normal response.

    kind: "status" (send `status` with `headers`), "drop" (close without a response),
    "stall" (send nothing for `seconds`, then close), "truncate" (announce the full length,
    send half the body, close), "slow" (send the body `chunk` bytes every `seconds`),
    "redirect" (`status` 302 to `location` + the request path when location ends with '/'),
    "raw" (send `status`, `headers` and `body` as given: a Content-Length header in `headers`
    is sent as is, so it can lie), "flood" (200 with no length, `size` bytes of zeros, close).
    """

    kind: str
    status: int = 503
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    chunk: int = 1024
    location: str = ""
    body: bytes = b""
    size: int = 0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]  # lower-cased names


@dataclass
class _Rule:
    pattern: re.Pattern[str]
    fault: Fault
    remaining: int | None  # None: forever


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # parallel clients must not see dropped SYNs

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients we SIGKILL or cut off mid-request are the point, not news


class FaultServer:
    def __init__(self, root: Path | None = None, *, gzip_bodies: bool = False) -> None:
        self.root = root
        self.gzip_bodies = gzip_bodies
        self.requests: list[Seen] = []
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else Nagle + delayed ACK add 40 ms per request

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self)

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/"

    # scripting ----------------------------------------------------------------------
    def fail(self, pattern: str, fault: Fault, times: int | None = 1) -> None:
        """The next `times` requests whose path matches `pattern` get `fault` (None: all)."""
        with self._lock:
            self._rules.append(_Rule(re.compile(pattern), fault, times))

    def storm(
        self, pattern: str, status: int, times: int | None, retry_after: str | None = None
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.fail(pattern, Fault("status", status=status, headers=headers), times)

    def redirect(self, pattern: str, location: str, times: int | None = None) -> None:
        self.fail(pattern, Fault("redirect", status=302, location=location), times)

    def paths(self) -> list[str]:
        with self._lock:
            return [s.path for s in self.requests]

    # serving ------------------------------------------------------------------------
    def _take(self, path: str) -> Fault | None:
        with self._lock:
            for rule in self._rules:
                if rule.remaining != 0 and rule.pattern.search(path):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                    return rule.fault
        return None

    def _handle(self, req: http.server.BaseHTTPRequestHandler) -> None:
        path = urlsplit(req.path).path
        with self._lock:
            self.requests.append(Seen(path, {k.lower(): v for k, v in req.headers.items()}))
        fault = self._take(path)
        if fault is None:
            self._serve_file(req, path)
        elif fault.kind == "status":
            body = f"fault {fault.status}\n".encode()
            self._send(req, fault.status, body, fault.headers)
        elif fault.kind == "redirect":
            target = (
                fault.location + path.lstrip("/")
                if fault.location.endswith("/")
                else fault.location
            )
            self._send(req, fault.status, b"", {"Location": target})
        elif fault.kind == "raw":
            self._send_raw(req, fault)
        elif fault.kind == "flood":
            self._flood(req, fault.size)
        elif fault.kind == "drop":
            self._hang_up(req)
        elif fault.kind == "stall":
            self._stopping.wait(fault.seconds)
            self._hang_up(req)
        elif fault.kind in ("truncate", "slow"):
            data = self._file(path)
            if data is None:
                self._send(req, 404, b"not found\n")
                return
            req.send_response(200)
            req.send_header("Content-Length", str(len(data)))
            for key, value in fault.headers.items():  # e.g. the Content-Type git expects
                req.send_header(key, value)
            req.end_headers()
            if fault.kind == "truncate":
                req.wfile.write(data[: len(data) // 2])
                req.wfile.flush()
                self._hang_up(req)
                return
            for i in range(0, len(data), max(1, fault.chunk)):
                if self._stopping.wait(fault.seconds):
                    break
                try:
                    req.wfile.write(data[i : i + fault.chunk])
                    req.wfile.flush()
                except OSError:  # the client went away (Ctrl-C test)
                    break
            self._hang_up(req)
        else:  # pragma: no cover - a typo in a test
            raise ValueError(f"unknown fault kind {fault.kind!r}")

    def _file(self, path: str) -> bytes | None:
        if self.root is None:
            return None
        rel = unquote(path).lstrip("/")
        target = (self.root / rel).resolve()
        if self.root.resolve() not in target.parents or not target.is_file():
            return None
        return target.read_bytes()

    def _serve_file(self, req: http.server.BaseHTTPRequestHandler, path: str) -> None:
        data = self._file(path)
        if data is None:
            self._send(req, 404, b"not found\n")
            return
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        headers = {"ETag": etag, "Last-Modified": formatdate(1_700_000_000, usegmt=True)}
        if req.headers.get("If-None-Match") == etag:
            self._send(req, 304, b"", headers, body_allowed=False)
            return
        if self.gzip_bodies and "gzip" in req.headers.get("Accept-Encoding", ""):
            data = gzip.compress(data, mtime=0)
            headers["Content-Encoding"] = "gzip"
        self._send(req, 200, data, headers)

    @staticmethod
    def _send(
        req: http.server.BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        *,
        body_allowed: bool = True,
    ) -> None:
        req.send_response(status)
        for key, value in (headers or {}).items():
            req.send_header(key, value)
        if body_allowed:
            req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        if body_allowed and body:
            req.wfile.write(body)

    @staticmethod
    def _send_raw(req: http.server.BaseHTTPRequestHandler, fault: Fault) -> None:
        req.send_response(fault.status)
        for key, value in fault.headers.items():
            req.send_header(key, value)
        if "Content-Length" not in fault.headers:
            req.send_header("Content-Length", str(len(fault.body)))
        req.end_headers()
        with contextlib.suppress(OSError):
            req.wfile.write(fault.body)
        FaultServer._hang_up(req)

    def _flood(self, req: http.server.BaseHTTPRequestHandler, size: int) -> None:
        req.send_response(200)
        req.send_header("Connection", "close")
        req.end_headers()
        block = b"\0" * 65536
        sent = 0
        while sent < size and not self._stopping.is_set():
            try:
                req.wfile.write(block)
            except OSError:  # the client stopped reading at its limit
                break
            sent += len(block)
        self._hang_up(req)

    @staticmethod
    def _hang_up(req: http.server.BaseHTTPRequestHandler) -> None:
        req.close_connection = True
        try:
            req.wfile.flush()
            req.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def wait_for(predicate: Callable[[], object], timeout: float = 30.0) -> bool:
    """Poll `predicate()` until true or timeout (for tests that race a subprocess)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False
