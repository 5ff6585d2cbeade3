"""Serve a folder over real HTTP on loopback with pytest-httpserver (ETag aware)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response


def folder_handler(
    root: Path, prefix: str = "/", log: list[str] | None = None
) -> Callable[[Request], Response]:
    def handler(request: Request) -> Response:
        if log is not None:
            log.append(request.path)
        rel = request.path[len(prefix) :].lstrip("/")
        path = (root / rel).resolve()
        if root.resolve() not in path.parents or not path.is_file():
            return Response("not found", status=404)
        data = path.read_bytes()
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        return Response(data, status=200, headers={"ETag": etag})

    return handler


def serve_folder(
    server: HTTPServer, root: Path, prefix: str = "/", log: list[str] | None = None
) -> str:
    """Register a catch-all handler; returns the base URL (ending in '/')."""
    import re

    server.expect_request(re.compile("^" + re.escape(prefix) + ".*")).respond_with_handler(
        folder_handler(root, prefix, log)
    )
    return server.url_for(prefix)
