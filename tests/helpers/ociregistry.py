"""CNCF distribution (Debian's `docker-registry`) on loopback for the `oci` registry kind.

Started per test with its own storage folder (tests tamper with blobs there) and, when
asked, htpasswd (bcrypt) basic auth; skipped cleanly where the binary is missing.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

BINARY = "docker-registry"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class OciRegistry:
    port: int
    storage: Path

    @property
    def url(self) -> str:
        return f"oci://127.0.0.1:{self.port}/skills"

    def blob_file(self, digest: str) -> Path:
        hexd = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hexd[:2] / hexd / "data"


def require_binary() -> str:
    path = shutil.which(BINARY)
    if path is None:
        pytest.skip(f"{BINARY} (CNCF distribution) is not installed")
    return path


@contextmanager
def oci_registry(base: Path, *, users: dict[str, str] | None = None) -> Iterator[OciRegistry]:
    binary = require_binary()
    base.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    auth = ""
    if users:
        htpasswd = shutil.which("htpasswd")
        if htpasswd is None:
            pytest.skip("htpasswd (apache2-utils) is not installed")
        lines = [
            subprocess.run(
                [htpasswd, "-Bbn", user, password], capture_output=True, text=True, check=True
            ).stdout.strip()
            for user, password in users.items()
        ]
        (base / "htpasswd").write_text("\n".join(lines) + "\n")
        auth = f"auth:\n  htpasswd:\n    realm: test\n    path: {base / 'htpasswd'}\n"
    storage = base / "data"
    (base / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: error\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n" + auth
    )
    proc = subprocess.Popen(
        [binary, "serve", str(base / "config.yml")],
        stdout=subprocess.DEVNULL,
        stderr=open(base / "registry.log", "wb"),  # noqa: SIM115
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v2/", timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((base / "registry.log").read_text()) from None
                time.sleep(0.1)
        yield OciRegistry(port, storage)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class TokenFront:
    """The Docker token flow in front of a real registry, on loopback: `/v2/...` answers 401
    with `WWW-Authenticate: Bearer realm=.../token,service=...,scope=...` unless it carries a
    token `/token` issued (for basic `user:password`); authorized requests are forwarded to
    the registry as they are (its Location headers name this front: the Host is kept)."""

    def __init__(self, backend_port: int, user: str, password: str, *, fail_gets: int = 0) -> None:
        import base64
        import http.server
        import secrets
        import threading

        self.tokens: set[str] = set()
        self.token_requests: list[str] = []  # each /token query string
        self.authorizations: list[str] = []  # every Authorization header /v2 saw
        self.fail_gets = fail_gets  # answer this many authorized GETs with 503 first
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        front = self
        backend = f"http://127.0.0.1:{backend_port}"

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.path.startswith("/token"):
                    front.token_requests.append(self.path)
                    if self.headers.get("Authorization") != expected:
                        self._reply(401, {})
                        return
                    token = secrets.token_hex(16)
                    front.tokens.add(token)
                    self._reply(
                        200,
                        {"Content-Type": "application/json"},
                        json.dumps({"token": token}).encode(),
                    )
                    return
                auth = self.headers.get("Authorization", "")
                front.authorizations.append(auth)
                if auth.removeprefix("Bearer ") not in front.tokens:
                    realm = f"http://127.0.0.1:{front.port}/token"
                    challenge = f'Bearer realm="{realm}",service="test",scope="repository:x:pull"'
                    self._reply(401, {"WWW-Authenticate": challenge})
                    return
                if self.command == "GET" and front.fail_gets > 0:
                    front.fail_gets -= 1
                    self._reply(503, {"Retry-After": "0"})
                    return
                keep = {"content-type", "accept", "host"}
                headers = {k: v for k, v in self.headers.items() if k.lower() in keep}
                resp = httpx.request(
                    self.command, backend + self.path, headers=headers, content=body, timeout=30
                )
                out = {
                    k: v
                    for k, v in resp.headers.items()
                    if k.lower() not in ("content-length", "transfer-encoding", "connection")
                }
                self._reply(resp.status_code, out, resp.content)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _handle

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"oci://127.0.0.1:{self.port}/skills"

    def __enter__(self) -> TokenFront:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
