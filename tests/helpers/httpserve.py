"""`ontoskills serve --transport http` as a real subprocess on a free port, and a bare
Streamable HTTP session (httpx, no SDK) that sees exactly what the server answers: status
codes, headers, the SSE frames. Used by the HTTP tests, the conformance run and
benchmarks/serve.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent.parent
LISTENING = re.compile(r"listening on (http://\S+)")
MODERN = "2026-07-28"
HANDSHAKE_ERA = "2025-11-25"
# What a Streamable HTTP client sends with every POST (the spec: both media types accepted).
POST_HEADERS: Mapping[str, str] = MappingProxyType(  # read-only: tests copy it to add headers
    {"content-type": "application/json", "accept": "application/json, text/event-stream"}
)


def initialize(request_id: int = 1, client: str = "raw-test") -> dict[str, Any]:
    """A handshake-era `initialize` request."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_ERA,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


class HttpServer:
    """The server subprocess; `url` once it listens (the line it prints on stderr)."""

    def __init__(self, env: dict[str, str], *args: str, timeout: float = 60) -> None:
        full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
        cmd = [sys.executable, "-m", "ontoskills", "serve", "--transport", "http", *args]
        if "--port" not in args:
            cmd += ["--port", "0"]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
        )
        self.stderr_lines: list[str] = []
        self._url: str | None = None
        self._ready = threading.Event()
        self._pump = threading.Thread(target=self._read_stderr, daemon=True)
        self._pump.start()
        self._ready.wait(timeout)
        if self._url is None:
            self.stop()
            raise RuntimeError("server did not start:\n" + self.stderr)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.stderr_lines.append(line)
            m = LISTENING.search(line)
            if m and self._url is None:
                self._url = m.group(1)
                self._ready.set()
        self._ready.set()

    @property
    def url(self) -> str:
        assert self._url is not None
        return self._url

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        code = self.proc.wait(timeout)
        self._pump.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def sse_messages(body: str) -> list[dict[str, Any]]:
    """JSON-RPC messages in a response body: SSE `data:` lines, or one JSON document."""
    if body.lstrip().startswith("{"):
        return [json.loads(body)]
    out = []
    for line in body.splitlines():
        if line.startswith("data:") and line[5:].strip():
            out.append(json.loads(line[5:].strip()))
    return out


class RawSession:
    """One handshake-era session over bare HTTP (async httpx)."""

    def __init__(
        self, client: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None
    ) -> None:
        self.client, self.url = client, url
        self.headers = {**POST_HEADERS, **(headers or {})}
        self.session_id: str | None = None
        self.version = HANDSHAKE_ERA
        self._id = 0

    def session_headers(self) -> dict[str, str]:
        """The headers of a request in this session (for raw posts of hand-made bodies)."""
        headers = dict(self.headers)
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = self.version
        return headers

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        headers = self.session_headers()
        return await self.client.post(self.url, headers=headers, content=json.dumps(message))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            msg["params"] = params
        resp = await self.post(msg)
        resp.raise_for_status()
        replies = [m for m in sse_messages(resp.text) if m.get("id") == self._id]
        assert replies, resp.text[:500]
        return replies[0]

    async def top_skill(self, q: str) -> str:
        """The first result of an `ontoskill` search for `q` (the session still answers)."""
        reply = await self.request("tools/call", {"name": "ontoskill", "arguments": {"q": q}})
        return str(reply["result"]["structuredContent"]["results"][0]["skill"])

    async def open(self) -> dict[str, Any]:
        self._id += 1
        resp = await self.post(initialize(self._id))
        resp.raise_for_status()
        self.session_id = resp.headers["mcp-session-id"]
        (reply,) = sse_messages(resp.text)
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code in (200, 202), done.text
        return reply

    async def close(self) -> None:
        headers = {k: v for k, v in self.headers.items() if k != "content-type"}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
            await self.client.delete(self.url, headers=headers)


def wait_gone(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return proc.returncode
        time.sleep(0.05)
    return None
