"""The HTTP transport's refusals of a malformed POST, said in one line (an ASGI layer under
`http.Guard`, over the SDK's Streamable HTTP app).

The SDK answers a body that is not JSON, or JSON that is not a JSON-RPC message, with a 400
whose error message is pydantic's whole report (2.5 KB for `{}`: eleven validation errors,
the input echoed back, pydantic URLs): internals a client cannot act on, and our input
repeated to whoever sent it. Here such a 400 keeps its status and gets the JSON-RPC error
the spec names, with a one-line message: -32700 (parse error) or -32600 (invalid request).

A POST without `mcp-session-id` makes the SDK open a session for it; when the request is
refused (anything but a valid `initialize`) the SDK discards that session again (checked in
tests/server/test_http_errors.py), but its 400 still carries the discarded session's id in
`mcp-session-id`, which reads as if a session had been opened. That header is dropped from
a refusal of a request that did not name a session.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SESSION_HEADER = b"mcp-session-id"
MAX_BUFFERED = 64 * 1024  # an SDK refusal is a few KB; anything larger passes as it is

# The SDK's message prefix -> (JSON-RPC code, what we say instead).
_SHORT = {
    "Parse error": (PARSE_ERROR, "Parse error: the body is not valid JSON"),
    "Validation error": (
        INVALID_REQUEST,
        'Invalid Request: not a JSON-RPC 2.0 message (a request is one object with "jsonrpc": '
        '"2.0", a string or integer "id" and a string "method"; batches are not allowed)',
    ),
}


def short_error(body: bytes) -> bytes | None:
    """The one-line error for an SDK 400 body, or None when it is not one we rewrite."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str):
        return None
    for prefix, (code, text) in _SHORT.items():
        if message.startswith(prefix):
            short = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
            return json.dumps(short).encode()
    return None


class ShortErrors:
    """Rewrites the SDK's 400 answers to POSTs (see the module doc); passes all else."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        named = any(k == SESSION_HEADER for k, _ in scope.get("headers") or [])
        await self.app(scope, receive, _Refusal(send, drop_session=not named))


class _Refusal:
    """A `send` that holds a 400's start until its body is whole, then rewrites both."""

    def __init__(self, send: Any, *, drop_session: bool) -> None:
        self.send = send
        self.drop_session = drop_session
        self.start: dict[str, Any] | None = None  # a held 400 start
        self.body = b""

    async def __call__(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.start" and message["status"] == 400:
            self.start = message
            return
        if kind == "http.response.start" and message["status"] > 400 and self.drop_session:
            message = {**message, "headers": _without_session(message.get("headers") or [])}
        if kind != "http.response.body" or self.start is None:
            await self.send(message)
            return
        self.body += message.get("body", b"")
        if message.get("more_body", False) and len(self.body) <= MAX_BUFFERED:
            return
        await self._flush(more_body=bool(message.get("more_body", False)))

    async def _flush(self, *, more_body: bool) -> None:
        assert self.start is not None
        headers = list(self.start.get("headers") or [])
        if self.drop_session:
            headers = _without_session(headers)
        short = None if more_body else short_error(self.body)
        if short is not None:
            self.body = short
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(short)).encode()))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": self.body, "more_body": more_body})
        self.start = None
        self.body = b""


def _without_session(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() != SESSION_HEADER]
