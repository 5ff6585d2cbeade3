"""Run the server over stdio until the client closes stdin.

Stdout carries protocol messages only: the SDK's `stdio_server()` points fd 1 at stderr
while it serves (stray prints, child processes and C libraries cannot corrupt the wire), and
we send our logs to stderr. A line that is not JSON-RPC gets a JSON-RPC error reply with
`"id": null` (the SDK would drop it silently, leaving the client waiting) and serving goes on.

A request whose JSON is valid but whose strings are not Unicode (a lone surrogate escape,
`"q": "\\ud800"`) is answered with an error carrying its own id: pydantic's parser refuses
the whole line, which would leave only a parse error with id null and a client waiting for
its answer forever. We read stdin ourselves (fd 0 diverted to /dev/null while we serve, as
the SDK does) and turn such a line into a marker request the relay answers.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..redact import LogRedactor
from .app import ServeOptions, Service, ServiceHolder, build_server

log = logging.getLogger("ontoskills.server")


def configure_logging(verbose: bool = False) -> None:
    """Our logs on stderr; the SDK's debug chatter only when asked for."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ontoskills serve: %(levelname)s %(message)s"))
    # Every line, the SDK's and uvicorn's access log included (they propagate here): no
    # query string, session id or bearer token, even with --verbose (redact.py).
    handler.addFilter(LogRedactor())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("mcp", "mcp_types", "httpx", "uvicorn", "uvicorn.error"):
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


# A method no client can mean: what `_screen` turns an undecodable request into.
UNDECODABLE = "ontoskills/undecodable-request"


def _bad_string(value: Any, where: str) -> str | None:
    """Where (a dotted path) the first string that is not valid Unicode sits, or None.
    The path itself is made printable: it goes into the error message we send."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{at or 'the message'} (lone surrogate U+{ord(node[exc.start]):04X})"
        elif isinstance(node, dict):
            for key, child in node.items():
                name = key.encode("utf-8", "backslashreplace").decode("utf-8")
                path = f"{at}.{name}" if at else name
                stack.extend(((child, path), (key, f"key {path}")))
        elif isinstance(node, list):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(node))
    return None


def _screen(line: str) -> str:
    """The line unchanged, unless its strings cannot be decoded: then a marker request with
    the same id (or a marker notification, dropped, when there is no id to answer)."""
    if "\\ud" not in line and "\\uD" not in line:
        return line  # JSON only spells a surrogate as an escape: the fast path for every line
    try:
        msg = json.loads(line)  # Python's parser keeps lone surrogates, pydantic's refuses
    except ValueError:
        return line
    if not isinstance(msg, dict):
        return line
    where = _bad_string(msg, "")
    if where is None:
        return line
    msg_id = msg.get("id")
    if "method" in msg and (
        (isinstance(msg_id, int) and not isinstance(msg_id, bool))
        or (isinstance(msg_id, str) and _bad_string(msg_id, "id") is None)
    ):
        marker = {"jsonrpc": "2.0", "id": msg_id, "method": UNDECODABLE, "params": {"at": where}}
    elif "id" in msg:
        return line  # no id we could echo: the SDK's parse error (id null) is all there is
    else:
        marker = {"jsonrpc": "2.0", "method": UNDECODABLE, "params": {"at": where}}
    return json.dumps(marker) + "\n"


class _ScreenedLines:
    """stdin as the SDK's reader sees it: UTF-8 lines, each passed through `_screen`."""

    def __init__(self, buffer: IO[bytes]) -> None:
        self._text = io.TextIOWrapper(buffer, encoding="utf-8", errors="replace")

    def readline(self) -> str:
        line = self._text.readline()
        return _screen(line) if line else line


@contextlib.contextmanager
def _claim_stdin() -> Iterator[IO[bytes]]:
    """The wire from a private duplicate of fd 0, with fd 0 on /dev/null while we serve (no
    child or library can eat a request); restored on exit. Where descriptors cannot be
    moved (Windows, a closed stdin), stdin's buffer is read in place."""
    try:
        import fcntl

        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):
        yield sys.stdin.buffer
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        # closefd=False: the reader thread may still block on it after we return
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(wire, 0)


def _undecodable_error(message: types.JSONRPCRequest) -> types.JSONRPCError:
    at = str((message.params or {}).get("at", "a string"))
    in_params = at.removeprefix("key ").startswith("params")
    code = types.INVALID_PARAMS if in_params else types.INVALID_REQUEST
    text = "Invalid params" if in_params else "Invalid Request"
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=message.id,
        error=types.ErrorData(code=code, message=f"{text}: {at} is not valid Unicode"),
    )


async def _relay(read: Any, forward: Any, write: Any) -> None:
    """Pass messages to the SDK loop; answer undecodable lines ourselves."""
    async with forward:
        async for item in read:
            reply = None
            if isinstance(item, Exception):
                log.warning("ignored a line that is not JSON-RPC (%s)", type(item).__name__)
                reply = _wire_error(item)
            elif getattr(item.message, "method", None) == UNDECODABLE:
                log.warning("refused a message whose strings are not valid Unicode")
                if isinstance(item.message, types.JSONRPCRequest):
                    reply = _undecodable_error(item.message)
                else:
                    continue  # a notification: nobody waits for an answer
            if reply is None:
                await forward.send(item)
                continue
            try:
                await write.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


async def serve_stdio(factory: Callable[[], Service], options: ServeOptions) -> None:
    holder = ServiceHolder(factory)
    server = build_server(holder, options)
    with _claim_stdin() as wire:
        # wrap_file only calls readline(), which _ScreenedLines provides.
        stdin = anyio.wrap_file(cast(IO[str], _ScreenedLines(wire)))
        await _serve(server, holder, stdin)


async def _serve(server: Any, holder: ServiceHolder, stdin: Any) -> None:
    async with stdio_server(stdin=stdin) as (read, write):
        forward, inbox = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            tg.start_soon(_relay, read, forward, write)
            await server.run(inbox, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
