"""Serve git repositories over smart HTTP on loopback with the real `git http-backend`.

This is how GitHub-like remotes behave for libgit2: shallow fetches, fetch-by-commit-id,
and HTTP Basic auth (`x-access-token:<token>`) when `token` is set. Tests skip when the git
CLI is absent. Each request is recorded (path, query, Authorization header) for assertions.
"""

from __future__ import annotations

import base64
import http.server
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import pytest


@dataclass
class GitRequest:
    path: str
    query: str
    authorization: str | None


def git_cli() -> str:
    git = shutil.which("git")
    if git is None:
        pytest.skip("needs the git CLI (git http-backend)")
    return git


class GitHttpServer:
    """`url_for(name)` -> http://127.0.0.1:PORT/<name> serving root/<name> (a bare repo)."""

    def __init__(self, root: Path, *, token: str | None = None) -> None:
        self.root = root
        self.token = token
        self.requests: list[GitRequest] = []
        git = git_cli()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # CGI output has no length: close delimits it
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server._cgi(self, git)

            def do_POST(self) -> None:
                server._cgi(self, git)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    def url_for(self, name: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/{name}"

    def _authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        expected = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        return header == f"Basic {expected}"

    def _cgi(self, req: http.server.BaseHTTPRequestHandler, git: str) -> None:
        parts = urlsplit(req.path)
        auth = req.headers.get("Authorization")
        self.requests.append(GitRequest(parts.path, parts.query, auth))
        if not self._authorized(auth):
            req.send_response(401)
            req.send_header("WWW-Authenticate", 'Basic realm="git"')
            req.send_header("Content-Length", "0")
            req.end_headers()
            return
        body = b""
        if req.command == "POST":
            if req.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = _read_chunked(req)
            else:
                body = req.rfile.read(int(req.headers.get("Content-Length", "0")))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": req.command,
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "CONTENT_TYPE": req.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": req.headers.get("Git-Protocol", ""),
            "HTTP_GIT_PROTOCOL": req.headers.get("Git-Protocol", ""),
            "REMOTE_ADDR": "127.0.0.1",
        }
        if req.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = req.headers["Content-Encoding"]
        out = subprocess.run(
            [git, "http-backend"], input=body, env=env, capture_output=True, check=False
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers: list[tuple[str, str]] = []
        for line in head.decode("latin-1").split("\r\n"):
            if not line:
                continue
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            else:
                headers.append((key, value.strip()))
        req.send_response(status)
        for key, value in headers:
            req.send_header(key, value)
        req.send_header("Content-Length", str(len(payload)))
        req.end_headers()
        req.wfile.write(payload)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> GitHttpServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _read_chunked(req: http.server.BaseHTTPRequestHandler) -> bytes:
    data = bytearray()
    while True:
        size = int(req.rfile.readline().split(b";")[0].strip(), 16)
        if size == 0:
            req.rfile.readline()
            return bytes(data)
        data += req.rfile.read(size)
        req.rfile.readline()


def bare_copy(work_repo: Path, dest: Path) -> Path:
    """A bare clone that allows fetching any reachable commit by id, as GitHub does."""
    git = git_cli()
    subprocess.run(
        [git, "clone", "--quiet", "--bare", str(work_repo), str(dest)],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [git, "-C", str(dest), "config", "uploadpack.allowReachableSHA1InWant", "true"],
        check=True,
    )
    return dest


def push_to(work_repo: Path, bare: Path) -> None:
    git = git_cli()
    subprocess.run(
        [git, "-C", str(work_repo), "push", "--quiet", "--force", str(bare), "HEAD:main"],
        check=True,
        capture_output=True,
    )
