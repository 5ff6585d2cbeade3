"""`serve --transport http` refusing a malformed POST: one line of JSON-RPC error with the
code the spec names, not the SDK's pydantic report; a refused POST that named no session
carries no session id, and opens none (real server, real HTTP on loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx

from tests.helpers.httpserve import HANDSHAKE_ERA, POST_HEADERS, HttpServer, RawSession

LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}


def _error(resp: httpx.Response) -> dict[str, object]:
    assert resp.status_code == 400, (resp.status_code, resp.text[:300])
    assert len(resp.content) < 400 and b"\n" not in resp.content.strip(), resp.text
    doc = json.loads(resp.content)
    assert doc["jsonrpc"] == "2.0" and doc["id"] is None
    message = doc["error"]["message"]
    for leak in ("pydantic", "input_value", "validation error", "Traceback"):
        assert leak not in message, message
    return dict(doc["error"])


def test_malformed_posts_get_a_one_line_jsonrpc_error(
    installed: Path, serve_env: dict[str, str]
) -> None:
    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            raw = RawSession(client, url)
            await raw.open()
            head = raw.session_headers()
            for content in (b"{}", b'{"jsonrpc":"2.0","id":1,"method":3}', b"[1]"):
                resp = await client.post(url, content=content, headers=head)
                assert _error(resp)["code"] == -32600, content
                assert resp.headers["mcp-session-id"] == raw.session_id  # its own session
            for content in (b"{not json", b'{"jsonrpc":"2.0",'):
                resp = await client.post(url, content=content, headers=head)
                assert _error(resp)["code"] == -32700, content
            # An honest request in the same session is answered as before.
            assert await raw.top_skill("debug failing tests") == "acme/devtools/debugging"
            # Without a session: the same short error, and no session id handed out.
            resp = await client.post(url, content=b"{}", headers=dict(POST_HEADERS))
            assert _error(resp)["code"] == -32600
            assert "mcp-session-id" not in resp.headers

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0
        assert "Traceback" not in server.stderr, server.stderr[-3000:]


def test_a_post_without_a_session_opens_none(installed: Path, serve_env: dict[str, str]) -> None:
    """`tools/list` before `initialize`: 400 "Missing session ID", no `mcp-session-id`
    header (it used to name a session the SDK had already discarded), and the server's log
    shows every session it opened for such a request was dropped again."""

    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            for _ in range(5):
                resp = await client.post(url, json=LIST, headers=dict(POST_HEADERS))
                error = _error(resp)
                assert "Missing session ID" in str(error["message"])
                assert "mcp-session-id" not in resp.headers
            # The refusals did not use up or disturb sessions: a real one still opens.
            raw = RawSession(client, url)
            await raw.open()
            assert raw.session_id
            head = {**POST_HEADERS, "mcp-protocol-version": HANDSHAKE_ERA}
            assert await raw.top_skill("review code") == "acme/devtools/reviewing"
            # A client that made up the id of a refused request gets 404 (no such session).
            resp = await client.post(url, json=LIST, headers={**head, "mcp-session-id": "0" * 32})
            assert resp.status_code == 404

    with HttpServer(serve_env) as server:
        anyio.run(body, server.url)
        assert server.stop() == 0


def test_refused_sessionless_posts_leave_no_session_behind(installed: Path) -> None:
    """The app in-process (our layers over the SDK's): every session the SDK opens for a
    sessionless POST it refuses is gone again once the answer is sent, so a client looping
    on such requests cannot pile sessions up to the SDK's cap."""
    from ontoskills.config import load_config
    from ontoskills.paths import Home
    from ontoskills.search.service import SkillService
    from ontoskills.server.app import ServeOptions, ServiceHolder
    from ontoskills.server.http import HttpOptions, build_app

    def factory() -> SkillService:
        h = Home(installed)
        return SkillService(h, h.default_lockfile, load_config(h.config_file))

    app = build_app(ServiceHolder(factory), ServeOptions(), HttpOptions())
    starlette = app.app.app  # Guard -> ShortErrors -> the SDK's Starlette app
    endpoint = next(r for r in starlette.routes if getattr(r, "path", None) == "/mcp")
    sessions = endpoint.endpoint.session_manager._server_instances

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with (
            starlette.router.lifespan_context(starlette),
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as c,
        ):
            for content in (json.dumps(LIST).encode(), b"{}", b"{oops"):
                for _ in range(20):
                    resp = await c.post("/mcp", content=content, headers=dict(POST_HEADERS))
                    assert resp.status_code == 400 and "mcp-session-id" not in resp.headers
            assert sessions == {}, len(sessions)

    anyio.run(main)
