"""Run the server over stdio until the client closes stdin.

Stdout carries protocol messages only: the SDK's `stdio_server()` points fd 1 at stderr
while it serves (stray prints, child processes and C libraries cannot corrupt the wire), and
we send our logs to stderr. A line that is not JSON-RPC gets a JSON-RPC error reply with
`"id": null` (the SDK would drop it silently, leaving the client waiting) and serving goes on.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .app import ServeOptions, Service, ServiceHolder, build_server

log = logging.getLogger("ontoskills.server")


def configure_logging(verbose: bool = False) -> None:
    """Our logs on stderr; the SDK's debug chatter only when asked for."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ontoskills serve: %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("mcp", "mcp_types", "httpx"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose else logging.WARNING)


def _wire_error(item: Exception) -> types.JSONRPCError:
    parse = isinstance(item, ValidationError) and any(
        e.get("type") == "json_invalid" for e in item.errors()
    )
    code, message = (
        (types.PARSE_ERROR, "Parse error") if parse else (types.INVALID_REQUEST, "Invalid Request")
    )
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )


async def _relay(read: Any, forward: Any, write: Any) -> None:
    """Pass messages to the SDK loop; answer undecodable lines ourselves."""
    async with forward:
        async for item in read:
            if isinstance(item, Exception):
                log.warning("ignored a line that is not JSON-RPC (%s)", type(item).__name__)
                try:
                    await write.send(SessionMessage(_wire_error(item)))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                continue
            await forward.send(item)


async def serve_stdio(factory: Callable[[], Service], options: ServeOptions) -> None:
    holder = ServiceHolder(factory)
    server = build_server(holder, options)
    async with stdio_server() as (read, write):
        forward, inbox = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            tg.start_soon(_relay, read, forward, write)
            await server.run(inbox, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
