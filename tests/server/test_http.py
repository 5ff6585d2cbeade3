"""`ontoskills serve --transport http`: the real subprocess, the SDK's Streamable HTTP client in
both protocol eras, bare HTTP for what a client library would hide (DNS rebinding, tokens,
status codes), 100 concurrent sessions, and SIGTERM while a request is in flight."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import CliRunner
from tests.helpers.httpserve import (
    HANDSHAKE_ERA,
    POST_HEADERS,
    HttpServer,
    RawSession,
    initialize,
    sse_messages,
    wait_gone,
)
from tests.helpers.registry import build_registry
from tests.helpers.richskill import rich_package, sample_rich
from tests.helpers.skillhost import sdk_request, walk_all

TOKEN = "t0ken-for-tests-0123456789abcdef"
ERAS = ("legacy", "auto")


def sdk_client(url: str, mode: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ERAS)
def test_sdk_client_in_both_eras_over_http(
    installed: Path, serve_env: dict[str, str], mode: str
) -> None:
    async def body(url: str) -> None:
        async with sdk_client(url, mode) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            found = await client.call_tool("ontoskill", {"q": "debug failing tests", "top_k": 3})
            assert found.structured_content["results"][0]["skill"] == "acme/devtools/debugging"
            walk = await walk_all(sdk_request(client))
            assert walk.problems == [] and walk.skills == 4

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0


def test_dns_rebinding_and_origin_are_refused(installed: Path, serve_env: dict[str, str]) -> None:
    init = initialize(client="x")
    head = dict(POST_HEADERS)
    with HttpServer(serve_env) as server:
        port = server.url.split(":")[2].split("/")[0]
        for extra, status in (
            ({"host": "evil.example"}, 421),
            ({"host": f"evil.example:{port}"}, 421),
            ({"origin": "http://evil.example"}, 403),
            ({"origin": f"http://localhost:{port}"}, 200),
            ({"host": f"localhost:{port}"}, 200),
        ):
            resp = httpx.post(server.url, json=init, headers={**head, **extra})
            assert resp.status_code == status, (extra, resp.text)
        bad = httpx.get(server.base + "/healthz", headers={"host": "evil.example"})
        assert bad.status_code == 421
        assert httpx.get(server.base + "/healthz").text == "ok\n"
        assert server.stop() == 0


def test_non_loopback_bind_needs_a_token(cli: CliRunner) -> None:
    for args, extra in (
        (["--host", "0.0.0.0"], {}),
        (["--host", "::"], {}),
        (["--host", "example.org"], {}),
        (["--host", "0.0.0.0"], {"ONTOSKILLS_SERVE_TOKEN": "short"}),
        (["--host", "0.0.0.0"], {"ONTOSKILLS_SERVE_TOKEN": "has a space " + "x" * 20}),
    ):
        proc = cli("serve", "--transport", "http", "--port", "0", *args, extra_env=extra)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "ONTOSKILLS_SERVE_TOKEN" in proc.stderr and proc.stdout == ""
        assert "short" not in proc.stderr and "has a space" not in proc.stderr
    proc = cli("serve", "--port", "8000")
    assert proc.returncode == 2 and "--transport http" in proc.stderr


def test_busy_port_is_a_usage_error(cli: CliRunner, serve_env: dict[str, str]) -> None:
    with HttpServer(serve_env) as server:
        port = server.url.split(":")[2].split("/")[0]
        proc = cli("serve", "--transport", "http", "--port", port)
        assert proc.returncode == 2 and "cannot listen" in proc.stderr
        assert server.stop() == 0


@pytest.mark.parametrize("verbose", [False, True])  # --verbose: access log + SDK debug logs
def test_token_on_a_non_loopback_bind(
    installed: Path, serve_env: dict[str, str], verbose: bool
) -> None:
    env = {**serve_env, "ONTOSKILLS_SERVE_TOKEN": TOKEN}
    flags = ["--verbose"] if verbose else []
    with HttpServer(env, "--host", "0.0.0.0", *flags) as server:
        url = server.url.replace("0.0.0.0", "127.0.0.1")
        head = dict(POST_HEADERS)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for auth in (
            None,
            "Bearer wrong-token-0123456789abcdef",
            f"Basic {TOKEN}",
            TOKEN,
            "Bearer",
        ):
            headers = {**head, **({"authorization": auth} if auth else {})}
            resp = httpx.post(url, json=ping, headers=headers)
            assert resp.status_code == 401, auth
            assert resp.headers["www-authenticate"].startswith("Bearer")

        async def body() -> None:
            for mode in ERAS:
                async with sdk_client(url, mode, TOKEN) as client:
                    result = await client.call_tool("ontoskill", {"q": "review code"})
                    assert not result.is_error

        anyio.run(body)
        assert server.stop() == 0
        assert TOKEN not in server.stderr and "wrong-token" not in server.stderr
        if verbose:  # the logs were on: they just never carry a header
            assert '"POST /mcp HTTP/1.1" 401' in server.stderr


def test_one_process_serves_100_concurrent_sessions(
    installed: Path, serve_env: dict[str, str]
) -> None:
    async def session(client: httpx.AsyncClient, url: str, n: int, out: dict[int, Any]) -> None:
        raw = RawSession(client, url)
        init = await raw.open()
        assert init["result"]["serverInfo"]["name"] == "ontoskills"
        q = ["debug failing tests", "review code", "plan the work", "add color"][n % 4]
        out[n] = (raw.session_id, await raw.top_skill(q))
        await raw.close()

    async def body(url: str) -> dict[int, Any]:
        out: dict[int, Any] = {}
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
        async with (
            httpx.AsyncClient(timeout=120, limits=limits) as client,
            anyio.create_task_group() as tg,
        ):
            for n in range(100):
                tg.start_soon(session, client, url, n, out)
        return out

    with HttpServer(serve_env) as server:
        out = anyio.run(body, server.url)
        assert server.stop() == 0
    assert len(out) == 100
    assert len({sid for sid, _ in out.values()}) == 100  # one session each
    expected = {
        0: "acme/devtools/debugging",
        1: "acme/devtools/reviewing",
        2: "acme/devtools/planning",
        3: "acme/design/colorize",
    }
    assert all(skill == expected[n % 4] for n, (_, skill) in out.items())


@pytest.fixture
def big_home(cli: CliRunner, tmp_path: Path, env: dict[str, str]) -> Path:
    """20 large skills: a cold skills/list renders them all (a request that takes a while)."""
    packages = [rich_package(sample_rich(), "pdf", f"acme/docs{n}") for n in range(20)]
    registry = build_registry(tmp_path / "big-reg", packages)
    cli("registry", "add", "big", str(registry), check=True)
    cli("--registry", "big", "install", *[p.id for p in packages], check=True, timeout=600)
    return Path(env["ONTOSKILLS_HOME"])


def test_sigterm_mid_request_finishes_it_and_exits_0(
    big_home: Path, serve_env: dict[str, str]
) -> None:
    with HttpServer(serve_env) as server:
        head = dict(POST_HEADERS)
        init = initialize(client="x")
        first = httpx.post(server.url, json=init, headers=head)
        sid = first.headers["mcp-session-id"]
        head |= {"mcp-session-id": sid, "mcp-protocol-version": HANDSHAKE_ERA}
        httpx.post(
            server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=head
        )
        result: dict[str, Any] = {}

        def slow() -> None:
            listing = {"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {}}
            try:
                resp = httpx.post(server.url, json=listing, headers=head, timeout=60)
                result["status"] = resp.status_code
                result["messages"] = sse_messages(resp.text)
            except httpx.HTTPError as exc:  # cancelled past the grace period: a clean error
                result["error"] = exc

        thread = threading.Thread(target=slow)
        started = time.monotonic()
        thread.start()
        time.sleep(0.3)  # the cold listing renders 20 skills: well over 0.3 s here
        server.proc.send_signal(signal.SIGTERM)
        code = wait_gone(server.proc, 30)
        thread.join(30)
        assert code == 0, server.stderr
        assert time.monotonic() - started < 20
        if "error" not in result:
            assert result["status"] == 200
            (reply,) = result["messages"]
            assert reply["id"] == 2 and len(reply["result"]["skills"]) == 20
        with pytest.raises(httpx.ConnectError):
            httpx.post(server.url, json=init, headers=head, timeout=5)


def test_listening_socket_says_tcp_so_answers_are_not_delayed() -> None:
    """asyncio sets TCP_NODELAY on accepted connections only when the listening socket's
    proto is IPPROTO_TCP; with proto 0 every answer waited ~40 ms for a delayed ACK."""
    import socket

    from ontoskills.server.http import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        sock.listen()
        client = socket.create_connection(sock.getsockname()[:2])
        conn, _ = sock.accept()
        assert conn.proto == socket.IPPROTO_TCP  # what asyncio checks before setting NODELAY
        conn.close()
        client.close()
    finally:
        sock.close()
