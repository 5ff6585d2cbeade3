"""What an attacker can send: `skill://` URIs that try to leave a skill's folder (dot
segments, percent-encoded dots and slashes, NUL, backslashes, double encoding), and HTTP
requests that are huge or malformed. Each gets an error and the server keeps serving; no
byte outside the listed files is ever returned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from ontoskills.server.http import MAX_BODY
from tests.helpers.httpserve import (
    POST_HEADERS,
    HttpServer,
    RawSession,
    sse_messages,
)
from tests.helpers.skillhost import sdk_request
from tests.server.test_inprocess import drive

ROOT = "skill://acme/devtools/debugging"
ESCAPES = [
    f"{ROOT}/../../../../ontoskills.lock",
    f"{ROOT}/../reviewing/SKILL.md",
    f"{ROOT}/./SKILL.md",
    f"{ROOT}//SKILL.md",
    f"{ROOT}/%2e%2e/%2e%2e/ontoskills.lock",
    f"{ROOT}/%2E%2E%2F%2E%2E%2Fontoskills.lock",
    f"{ROOT}/..%2fontoskills.lock",
    f"{ROOT}/%252e%252e/ontoskills.lock",
    f"{ROOT}/..\\..\\ontoskills.lock",
    f"{ROOT}/SKILL.md%00.png",
    f"{ROOT}/SKILL%2Emd",  # the same name, not in the canonical form we list
    f"{ROOT}/SKILL.md?x=1",
    f"{ROOT}/SKILL.md#frag",
    f"{ROOT}/%ff%fe",  # not UTF-8 once decoded
    "skill://acme/devtools/../devtools/debugging/SKILL.md",
    "skill://acme/devtools/%64ebugging/SKILL.md",
    "skill://ACME/devtools/debugging/SKILL.md",
    "skill:///etc/passwd",
    "skill://../../../etc/passwd",
    "skill://acme/..",
    "skill://acme/devtools/..",
    "skill://acme/%2e%2e",
    "file:///etc/passwd",
    f"{ROOT}/" + "a/" * 20_000 + "SKILL.md",
]


def test_uris_cannot_leave_a_skill(installed: Path) -> None:
    lock_head = (installed / "ontoskills.lock").read_text()[:60]

    async def body(client: Client) -> list[tuple[str, str, Any]]:
        send = sdk_request(client)
        out: list[tuple[str, str, Any]] = []
        ok = await send("resources/read", {"uri": f"{ROOT}/SKILL.md"})  # the control
        assert ok["contents"][0]["text"].startswith("---\nname: debugging\n")
        for uri in ESCAPES:
            for method in ("resources/read", "skills/get", "resources/directory/read"):
                try:
                    out.append((uri, method, await send(method, {"uri": uri})))
                except MCPError as exc:
                    out.append((uri, method, exc))
        return out

    for uri, method, result in drive(installed, "legacy", body):
        assert isinstance(result, MCPError), (uri, method, str(result)[:200])
        assert result.error.code == types.INVALID_PARAMS, (uri, method)
        assert lock_head not in json.dumps(result.error.model_dump()), (uri, method)


def test_huge_and_malformed_http_requests(installed: Path, serve_env: dict[str, str]) -> None:
    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            raw = RawSession(client, url)
            await raw.open()
            head = raw.session_headers()
            too_big = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"' + b"a" * MAX_BODY
            resp = await client.post(url, content=too_big, headers=head)
            assert resp.status_code == 413

            async def chunks() -> Any:  # no Content-Length: refused once past the limit
                for _ in range(MAX_BODY // 65536 + 2):
                    yield b"a" * 65536

            resp = await client.post(url, content=chunks(), headers=head)
            assert resp.status_code == 413
            for content, status in (
                (b"{not json", 400),
                (b"\xff\xfe\x00garbage", 400),
                (b'{"jsonrpc": "2.0", "id": 1}', 400),  # JSON, not a message
                (b"[]", 400),
            ):
                resp = await client.post(url, content=content, headers=head)
                assert resp.status_code == status, (content, resp.text)
            plain = {**head, "content-type": "text/plain"}
            resp = await client.post(url, content=b"{}", headers=plain)
            assert resp.status_code in (400, 415)  # the SDK's transport security: 400
            # Headers past uvicorn's bound (h11: 64 KB): the connection is refused or closed.
            try:
                resp = await client.post(
                    url, content=b"{}", headers={**head, "x-big": "h" * 200_000}
                )
                assert resp.status_code in (400, 431)
            except (httpx.ReadError, httpx.RemoteProtocolError):
                pass
            # Just under the limit is served: a big but legal `q`.
            q = "debug failing tests " + "x" * 16_000
            reply = await raw.request("tools/call", {"name": "ontoskill", "arguments": {"q": q}})
            assert "result" in reply
            # And the session still works after all of that.
            assert await raw.top_skill("debug failing tests") == "acme/devtools/debugging"

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0


@pytest.mark.parametrize("declared", ["99999999999999999999", str(MAX_BODY + 1)])
def test_a_declared_huge_body_is_refused_before_it_is_sent(
    installed: Path, serve_env: dict[str, str], declared: str
) -> None:
    """A client that announces a huge body gets 413 without the server waiting for it."""
    import socket

    with HttpServer(serve_env) as server:
        host, port = server.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\n"
                b"Content-Length: " + declared.encode() + b"\r\n\r\n{"
            )
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        with httpx.Client(timeout=30) as client:
            resp = client.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                               headers=POST_HEADERS)  # fmt: skip
            assert resp.status_code in (200, 400)  # served (no session: the SDK's answer)
            assert sse_messages(resp.text) or resp.text
        assert server.stop() == 0
