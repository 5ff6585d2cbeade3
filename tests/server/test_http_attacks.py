"""Attacks on `serve --transport http` below what a client library would send: Host and
Origin headers a DNS-rebinding page or a raw socket can forge, bearer tokens that are almost
right, bodies that never end, headers trickled byte by byte, sessions left open, JSON-RPC
that is not what the spec allows, another client's session id. Raw sockets where httpx
would normalise the request. Each attack is refused with a status code and the server goes
on serving the honest session opened before it."""

from __future__ import annotations

import json
import signal
import socket
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.helpers.httpserve import (
    HANDSHAKE_ERA,
    POST_HEADERS,
    HttpServer,
    RawSession,
    initialize,
    sse_messages,
    wait_gone,
)

TOKEN = "t0ken-for-tests-0123456789abcdef"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def host_port(server: HttpServer) -> tuple[str, int]:
    host, port = server.base.removeprefix("http://").rsplit(":", 1)
    return host.strip("[]"), int(port)


def raw_request(
    server: HttpServer,
    head: bytes,
    body: bytes = b"",
    *,
    version: bytes = b"HTTP/1.1",
    target: bytes = b"/mcp",
) -> bytes:
    """One request exactly as written (headers as given, no Host added); the status line."""
    request = b"POST " + target + b" " + version + b"\r\n" + head
    request += b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    request += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
    with socket.create_connection(host_port(server), timeout=30) as sock:
        sock.sendall(request)
        return status_line(sock)


def status_line(sock: socket.socket) -> bytes:
    """The first line the server sends (b"" if it closes without one)."""
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    return answer.split(b"\r\n", 1)[0]


def status(line: bytes) -> int:
    return int(line.split()[1]) if line.startswith(b"HTTP/") else 0


def test_forged_host_and_origin_headers(installed: Path, serve_env: dict[str, str]) -> None:
    """The DNS-rebinding check compares Host and Origin with the names this server answers
    to: a rebinding page's own name, a loopback look-alike suffix, a missing Host, an origin
    of another scheme or `null` are all refused; the loopback names (IPv6 too) pass."""
    with HttpServer(serve_env) as server:
        _, port = host_port(server)
        p = str(port).encode()
        local = b"Host: 127.0.0.1:" + p + b"\r\n"
        cases: list[tuple[bytes, bytes, int]] = [
            (b"Host: 127.0.0.1:" + p + b"\r\n", b"HTTP/1.1", 200),  # the control
            (b"Host: [::1]:" + p + b"\r\n", b"HTTP/1.1", 200),
            (b"Host: localhost:" + p + b"\r\n", b"HTTP/1.1", 200),
            (b"Host: evil.example\r\n", b"HTTP/1.1", 421),
            (b"Host: evil.example:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: 127.0.0.1.evil.example:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: localhost.evil.example:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: 127.0.0.2:" + p + b"\r\n", b"HTTP/1.1", 421),  # loopback, not listed
            (b"Host: [::ffff:127.0.0.1]:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: [::1].evil.example:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: LOCALHOST.:" + p + b"\r\n", b"HTTP/1.1", 421),
            (b"Host: 2130706433:" + p + b"\r\n", b"HTTP/1.1", 421),  # 127.0.0.1 as a number
            (b"Host: \r\n", b"HTTP/1.1", 421),
            (b"", b"HTTP/1.0", 421),  # HTTP/1.0 may omit Host: no Host, no service
            (b"", b"HTTP/1.1", 400),  # HTTP/1.1 without Host: h11 refuses the request
            (local + b"Origin: http://evil.example\r\n", b"HTTP/1.1", 403),
            (local + b"Origin: null\r\n", b"HTTP/1.1", 403),
            (local + b"Origin: file://\r\n", b"HTTP/1.1", 403),
            (local + b"Origin: http://127.0.0.1.evil.example\r\n", b"HTTP/1.1", 403),
            (local + b"Origin: ws://localhost:" + p + b"\r\n", b"HTTP/1.1", 403),
            (local + b"Origin: http://localhost:" + p + b"\r\n", b"HTTP/1.1", 200),
        ]
        body = json.dumps(initialize(client="forged")).encode()
        for head, version, expected in cases:
            line = raw_request(server, head, body, version=version)
            assert status(line) == expected, (head, version, line)
            # /healthz checks Host (same answer), not Origin (a health probe sends none).
            health = raw_request(server, head, version=version, target=b"/healthz")
            assert status(health) == (200 if expected == 403 else expected), (head, health)
        assert server.stop() == 0


def test_almost_right_bearer_tokens(installed: Path, serve_env: dict[str, str]) -> None:
    """Every near miss is 401 with the challenge, the token is never echoed, and the right
    token still works after all of them. The token in the query string is not a token."""
    env = {**serve_env, "ONTOSKILLS_SERVE_TOKEN": TOKEN}
    with HttpServer(env) as server:
        _, port = host_port(server)
        host = b"Host: 127.0.0.1:%d\r\n" % port
        tok = TOKEN.encode()
        refused = [
            b"",
            b"Authorization: Bearer " + tok[:-1] + b"\r\n",  # a prefix
            b"Authorization: Bearer " + tok + b"x\r\n",  # the token as a prefix
            b"Authorization: Bearer " + tok.upper() + b"\r\n",
            b"Authorization: Bearer " + tok + b"\xff\r\n",  # non-ASCII byte appended
            b"Authorization: Bearer " + "t\u00f6ken".encode() + b"\r\n",
            b"Authorization: Bearer " + b"A" * 60_000 + b"\r\n",  # long, under h11's bound
            b"Authorization: Bearer\r\n",
            b"Authorization: Bearertoken" + tok + b"\r\n",
            b"Authorization: Basic " + tok + b"\r\n",
            b"Authorization: " + tok + b"\r\n",
            b"Authorization: Bearer " + tok + b"\r\nAuthorization: Bearer wrong\r\n",
            b"Authorization: Bearer wrong\r\nAuthorization: Bearer " + tok + b"\r\n",
            b"X-Authorization: Bearer " + tok + b"\r\n",
        ]
        for auth in refused:
            line = raw_request(server, host + auth, PING)
            assert status(line) == 401, (auth[:80], line)
        for target in (b"/mcp?token=" + tok, b"/mcp?access_token=" + tok):
            assert status(raw_request(server, host, PING, target=target)) == 401
        ok = raw_request(server, host + b"Authorization: bearer " + tok + b"\r\n", PING)
        assert status(ok) in (200, 400), ok  # past the guard: the SDK's own answer
        assert status(raw_request(server, host, target=b"/healthz")) == 200  # no token needed
        assert server.stop() == 0
        assert TOKEN not in server.stderr


def test_a_50mb_body_is_not_buffered(installed: Path, serve_env: dict[str, str]) -> None:
    """A chunked body that would be 50 MB: the 413 arrives while most of it is still unsent
    (the server stops reading at 1 MiB), and the honest session goes on."""
    total = 50 * 1024 * 1024
    with HttpServer(serve_env) as server:
        sent = [0]

        def open_session() -> RawSession:
            return RawSession(httpx.AsyncClient(timeout=60), server.url)

        sock = socket.create_connection(host_port(server), timeout=60)
        _, port = host_port(server)
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            % port
        )

        def pump() -> None:
            chunk = b"%x\r\n" % 65536 + b"a" * 65536 + b"\r\n"
            try:
                while sent[0] < total:
                    sock.sendall(chunk)
                    sent[0] += 65536
            except OSError:  # the server answered and closed: what we expect
                pass

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        answer = status_line(sock)
        seen_at = sent[0]
        sock.close()
        thread.join(60)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert seen_at < total // 4, seen_at  # answered long before the body ended

        async def honest() -> None:
            raw = open_session()
            async with raw.client:
                await raw.open()
                reply = await raw.request(
                    "tools/call", {"name": "ontoskill", "arguments": {"q": "review code"}}
                )
                assert not reply["result"].get("isError")

        anyio.run(honest)
        assert server.stop() == 0


def test_slow_clients_do_not_block_other_sessions(
    installed: Path, serve_env: dict[str, str]
) -> None:
    """Twenty connections trickle their headers a byte at a time and one sends half a body
    and stalls; meanwhile a session is opened and served, and SIGTERM still ends the server
    (the stalled connections are cut after the grace period) with exit 0."""
    with HttpServer(serve_env) as server:
        _, port = host_port(server)
        stop = threading.Event()
        slow: list[socket.socket] = []
        for _ in range(20):
            sock = socket.create_connection(host_port(server), timeout=30)
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
            slow.append(sock)
        stalled = socket.create_connection(host_port(server), timeout=30)
        stalled.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b'Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"js'
            % port
        )

        def trickle() -> None:
            while not stop.is_set():
                for sock in slow:
                    try:
                        sock.sendall(b"X")
                    except OSError:
                        return
                stop.wait(0.2)

        thread = threading.Thread(target=trickle, daemon=True)
        thread.start()

        async def honest() -> list[str]:
            async with httpx.AsyncClient(timeout=30) as client:
                raw = RawSession(client, server.url)
                await raw.open()
                out = []
                for q in ("debug failing tests", "review code", "add color"):
                    out.append(await raw.top_skill(q))
                return out

        try:
            assert anyio.run(honest) == [
                "acme/devtools/debugging",
                "acme/devtools/reviewing",
                "acme/design/colorize",
            ]
            server.proc.send_signal(signal.SIGTERM)
            assert wait_gone(server.proc, 30) == 0, server.stderr
        finally:
            stop.set()
            thread.join(10)
            for sock in [*slow, stalled]:
                sock.close()


def test_jsonrpc_shapes_the_spec_does_not_allow(installed: Path, serve_env: dict[str, str]) -> None:
    """Batches (removed from the protocol in 2025-06-18), ids of the wrong type, a JSON
    nested 100,000 deep, a method that is not a string: each is refused as a whole request
    (400, or a JSON-RPC error), and the session goes on."""

    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            raw = RawSession(client, url)
            await raw.open()
            head = raw.session_headers()
            ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
            call = {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "ontoskill", "arguments": {"q": "review code"}},
            }
            bad: list[bytes] = [
                json.dumps([ping, call]).encode(),  # a batch
                json.dumps([ping]).encode(),
                json.dumps({**ping, "id": {"a": 1}}).encode(),
                json.dumps({**ping, "id": [1]}).encode(),
                json.dumps({**ping, "id": True}).encode(),
                json.dumps({**ping, "method": 3}).encode(),
                json.dumps({**ping, "jsonrpc": "1.0"}).encode(),
                b"[" * 100_000 + b"]" * 100_000,
                b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
                b'{"jsonrpc":"2.0","id":1,"method":"ping","id":2}',  # duplicate key
                b"\xef\xbb\xbf" + json.dumps(ping).encode(),  # a BOM
                b"null",
                b'"ping"',
            ]
            for content in bad:
                resp = await client.post(url, content=content, headers=head)
                if resp.status_code == 200:  # answered as JSON-RPC: must be an error
                    replies = sse_messages(resp.text)
                    assert all("error" in m or "result" in m for m in replies), resp.text[:200]
                    assert not any(m.get("id") == 8 and "result" in m for m in replies), content[
                        :60
                    ]
                else:
                    assert resp.status_code in (400, 202), (content[:60], resp.status_code)
                assert resp.status_code != 500, content[:60]
            assert await raw.top_skill("debug failing tests") == "acme/devtools/debugging"

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0
        assert "Traceback" not in server.stderr, server.stderr[-3000:]


def test_session_ids_forged_or_borrowed(installed: Path, serve_env: dict[str, str]) -> None:
    """Session ids are unguessable (the SDK's uuid4 hex); a made-up one is 404, hostile forms
    (path characters, 10 KB, non-ASCII) are 400/404 without a trace in the log. A session id
    is not a credential: whoever holds the token (or, without one, can reach the loopback
    port) and learns another client's id can use that session. docs/SERVER.md says so."""

    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            a = RawSession(client, url)
            b = RawSession(client, url)
            await a.open()
            await b.open()
            assert a.session_id and b.session_id and a.session_id != b.session_id
            assert len(a.session_id) >= 32
            for forged in (
                "0" * 32,
                a.session_id[:-1] + ("0" if a.session_id[-1] != "0" else "1"),
                "../" + a.session_id,
                "x" * 10_000,
                a.session_id.upper(),
            ):
                head = {
                    **POST_HEADERS,
                    "mcp-session-id": forged,
                    "mcp-protocol-version": HANDSHAKE_ERA,
                }
                resp = await client.post(url, content=PING, headers=head)
                assert resp.status_code in (400, 404), (forged[:40], resp.status_code)
            head = {**POST_HEADERS, "mcp-protocol-version": HANDSHAKE_ERA}
            resp = await client.post(
                url, content=PING, headers={**head, "mcp-session-id": "s\u00e9ssion".encode()}
            )
            assert resp.status_code in (400, 404)
            # Borrowed: b's request on a's id is served in a's session.
            b.session_id = a.session_id
            reply = await b.request("ping")
            assert reply.get("result") == {}
            await a.close()  # a ends its session: the borrowed id is dead for both
            resp = await client.post(
                url, content=PING, headers={**head, "mcp-session-id": a.session_id}
            )
            assert resp.status_code == 404

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0
        assert "Traceback" not in server.stderr, server.stderr[-3000:]


@pytest.mark.parametrize("count", [300])
def test_abandoned_sessions_are_bounded(
    installed: Path, serve_env: dict[str, str], count: int
) -> None:
    """Sessions opened and never closed: each is a task in the server until its idle
    timeout (30 min) or the cap (10,000; the SDK answers 503 past it); opening hundreds does
    not stop a new session from being served. (Memory per abandoned session: measured in
    docs/SERVER.md.)"""

    async def body(url: str) -> None:
        limits = httpx.Limits(max_connections=20)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            async with anyio.create_task_group() as tg:
                for _ in range(count):
                    tg.start_soon(RawSession(client, url).open)
            raw = RawSession(client, url)
            await raw.open()
            assert await raw.top_skill("review code") == "acme/devtools/reviewing"

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0


def test_headers_must_arrive_within_the_deadline() -> None:
    """uvicorn's h11 protocol waits for headers for ever; ours closes a connection whose
    request headers are not complete in time: a fresh connection trickling them, one that
    sends nothing, and a kept-alive connection that starts a second request and stalls.
    A request whose headers are in is never cut, however long its answer takes. (A real
    uvicorn server in-process, with the deadline set short for the test.)"""
    import asyncio

    import uvicorn

    from ontoskills.server.http import bind, header_deadline_protocol

    class Short(header_deadline_protocol()):  # type: ignore[misc]
        header_timeout = 0.5

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/slow":
            await asyncio.sleep(2)  # an answer slower than the header deadline
        body = b"done"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"4")]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, http=Short, log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.02)
        addr = sock.getsockname()[:2]

        def closed_by_server(conn: socket.socket) -> bool:
            conn.settimeout(10)  # a hang detector: the deadline is 0.5 s
            try:
                while True:
                    data = conn.recv(4096)
                    if not data:
                        return True
            except TimeoutError:
                return False
            finally:
                conn.close()

        silent = socket.create_connection(addr)
        trickle = socket.create_connection(addr)
        trickle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        kept = socket.create_connection(addr)
        kept.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"done"):  # headers and body may come in two segments
            chunk = kept.recv(4096)
            assert chunk, first
            first += chunk
        assert first.startswith(b"HTTP/1.1 200") and first.endswith(b"done"), first
        kept.sendall(b"GET / HTTP/1.1\r\nHo")  # the next request stalls mid-headers
        slow = socket.create_connection(addr)
        slow.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert closed_by_server(silent)
        assert closed_by_server(trickle)
        assert closed_by_server(kept)
        slow.settimeout(10)
        answer = b""
        while chunk := slow.recv(4096):
            answer += chunk
        slow.close()
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"done"), answer
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
