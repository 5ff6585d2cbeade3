"""Replicas of `serve --transport http` over one home behind a real HAProxy on loopback, with
the config docs/SERVER.md gives ("Replicas behind HAProxy"; only its ports changed): both
protocol eras through the balancer, 2025-era sessions pinned, a replica killed mid-run.
Skips cleanly where `haproxy` is not installed (.ci/run installs it when it can)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO
from tests.helpers.httpserve import HANDSHAKE_ERA, POST_HEADERS, HttpServer, sse_messages

HAPROXY = shutil.which("haproxy") or (
    "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").is_file() else None
)
pytestmark = pytest.mark.skipif(HAPROXY is None, reason="needs haproxy (apt-get install haproxy)")
ALLOWED_HOST = "skills.internal:8765"


def documented_config() -> str:
    text = (REPO / "docs" / "SERVER.md").read_text(encoding="utf-8")
    section = text[text.index("### Replicas behind HAProxy") :]
    return section[section.index("```haproxy\n") + 11 : section.index("```\n", 10)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Balanced:
    def __init__(self, url: str, replicas: list[HttpServer]) -> None:
        self.url, self.replicas = url, replicas


@contextmanager
def haproxy_in_front(replicas: list[HttpServer], tmp_path: Path) -> Iterator[str]:
    """The documented config in front of `replicas` (its ports changed); yields its URL."""
    assert HAPROXY is not None
    ports = [int(r.url.rsplit(":", 1)[1].split("/")[0]) for r in replicas]
    front = free_port()
    config = documented_config().replace("127.0.0.1:8765", f"127.0.0.1:{front}")
    servers = "".join(
        f"    server r{i + 1} 127.0.0.1:{port} check inter 500ms\n" for i, port in enumerate(ports)
    )
    config = re.sub(r"(?m)^    server r\d .*\n", "", config) + servers
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(config, encoding="utf-8")
    proc = subprocess.Popen(
        [HAPROXY, "-db", "-f", str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        _wait_for(front, proc)
        yield f"http://127.0.0.1:{front}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def balanced(installed: Path, serve_env: dict[str, str], tmp_path: Path) -> Iterator[Balanced]:
    replicas = [HttpServer(serve_env, "--allow-host", ALLOWED_HOST) for _ in range(2)]
    try:
        with haproxy_in_front(replicas, tmp_path) as url:
            yield Balanced(url, replicas)
    finally:
        for r in replicas:
            r.__exit__()


def _wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            raise AssertionError(f"haproxy exited {proc.returncode}: {out}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("haproxy did not listen")


def _session_calls(url: str, sessions: int, calls: int) -> int:
    """2025-era sessions over bare HTTP through the balancer: calls answered with a result."""
    ok = 0
    with httpx.Client(timeout=60) as client:
        for n in range(sessions):
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE_ERA,
                    "capabilities": {},
                    "clientInfo": {"name": f"replica-test-{n}", "version": "1"},
                },
            }
            reply = client.post(url, headers=dict(POST_HEADERS), json=init)
            headers = {
                **POST_HEADERS,
                "mcp-session-id": reply.headers["mcp-session-id"],
                "mcp-protocol-version": HANDSHAKE_ERA,
            }
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            client.post(url, headers=headers, json=note)
            for i in range(calls):
                call = {
                    "jsonrpc": "2.0",
                    "id": 10 + i,
                    "method": "tools/call",
                    "params": {"name": "ontoskill", "arguments": {"q": "debug failing tests"}},
                }
                r = client.post(url, headers=headers, json=call)
                ok += r.status_code == 200 and "result" in sse_messages(r.text)[-1]
    return ok


def test_handshake_era_sessions_stay_on_their_replica(balanced: Balanced) -> None:
    """Every call of every session answered: without the stick table, about half would reach
    the replica that does not know the session (404)."""
    assert _session_calls(balanced.url, sessions=4, calls=4) == 16


def _modern_calls(url: str, calls: int) -> list[str]:
    async def body() -> list[str]:
        found = []
        async with Client(streamable_http_client(url), mode="auto") as client:  # type: ignore[arg-type]
            assert client.protocol_version == "2026-07-28"
            for _ in range(calls):
                res = await client.call_tool("ontoskill", {"q": "debug failing tests"})
                found.append(res.structured_content["results"][0]["skill"])
        return found

    return anyio.run(body)


def test_modern_requests_round_robin_and_survive_a_killed_replica(balanced: Balanced) -> None:
    """2026-07-28 requests need no affinity; one replica killed, the next calls are all
    answered by the other (the health check and redispatch route around it)."""
    assert set(_modern_calls(balanced.url, 6)) == {"acme/devtools/debugging"}
    balanced.replicas[0].proc.kill()
    balanced.replicas[0].proc.wait(10)
    assert set(_modern_calls(balanced.url, 6)) == {"acme/devtools/debugging"}
    # A handshake-era client starts a new session on the survivor.
    assert _session_calls(balanced.url, sessions=2, calls=2) == 4
