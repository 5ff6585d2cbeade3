"""Run the server over stdio until the client closes stdin.

Stdout carries protocol messages only: the SDK's `stdio_server()` points fd 1 at stderr
while it serves (stray prints, child processes and C libraries cannot corrupt the wire), and
we send our logs to stderr. A line that is not JSON-RPC gets a JSON-RPC error reply with
`"id": null` (the SDK would drop it silently, leaving the client waiting) and serving goes on.

A request whose JSON is valid but whose strings are not Unicode (a lone surrogate escape,
`"q": "\\ud800"`) is answered with an error carrying its own id: pydantic's parser refuses
the whole line, which would leave only a parse error with id null and a client waiting for
its answer forever. We read stdin ourselves (fd 0 diverted to /dev/null while we serve, as
the SDK does) and turn such a line into a marker request the relay answers; a number JSON
cannot hold (`1e999999`, `NaN`: infinity or NaN to a parser) is answered the same way.

We also parse each line ourselves, once, instead of the SDK's reader (whose `except
Exception` lets pydantic-core's PanicException, a BaseException, end the server): stdin is
read in chunks and a line longer than MAX_LINE_BYTES is dropped while it streams, never held
whole (a 300 MB line cost 1 GB of RSS, 600 MB killed the server), and answered with an error;
a request whose id is no string or integer (`1.5`, `null`, `1e999999`), which the SDK took
for a notification and never answered, gets `-32600`. Serving goes on after every one.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..redact import LogRedactor
from .app import ServeOptions, Service, ServiceHolder, build_server
from .early import FirstLine

log = logging.getLogger("ontoskills.server")

# A stdio line (one JSON-RPC message) is at most this long (docs/SERVER.md): MCP requests are
# KBs; a line is held ~4x over while parsed (a 15 MB one: +60 MB of peak RSS).
MAX_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 64 * 1024
# Where a line needs Python's parser: a surrogate escape, or a number that may not be finite.
_RISKY = re.compile(r"\\u[dD][89a-fA-F]|[0-9][eE][+-]?[0-9]{3}|NaN|Infinity")


class _Refused(Exception):
    """A line answered with a JSON-RPC error (id null) instead of reaching the server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


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
    if isinstance(item, _Refused):
        code, message = item.code, str(item)
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )


# A method no client can mean: what `_screen` turns an undecodable request into.
UNDECODABLE = "ontoskills/undecodable-request"
_NOT_UNICODE = "is not valid Unicode"


def _bad_string(value: Any, where: str) -> str | None:
    """Where (a dotted path) the first string that is not valid Unicode sits, or None."""
    found = _bad_value(value, where)
    return found[0] if found is not None and found[1] == _NOT_UNICODE else None


def _bad_value(value: Any, where: str) -> tuple[str, str] | None:
    """(where, what is wrong) for the first string that is not valid Unicode or number that
    is not finite, or None. The path itself is made printable: it goes into our reply."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError as exc:
                lone = f"lone surrogate U+{ord(node[exc.start]):04X}"
                return f"{at or 'the message'} ({lone})", _NOT_UNICODE
        elif isinstance(node, float) and not math.isfinite(node):
            return at or "the message", "is not a finite number (out of range for JSON)"
        elif isinstance(node, dict):
            for key, child in node.items():
                name = key.encode("utf-8", "backslashreplace").decode("utf-8")
                path = f"{at}.{name}" if at else name
                stack.extend(((child, path), (key, f"key {path}")))
        elif isinstance(node, list):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(node))
    return None


def _screen(line: str) -> str:
    """The line unchanged, unless a string cannot be decoded or a number is not finite: then
    a marker request with the same id (or a marker notification, dropped, when there is no
    id to answer)."""
    if _RISKY.search(line) is None:
        return line  # JSON spells a surrogate only as an escape: the fast path for every line
    try:
        msg = json.loads(line)  # Python's parser keeps lone surrogates, pydantic's refuses
    except (ValueError, RecursionError, MemoryError):
        return line  # the SDK's parser refuses it too: a parse error (id null)
    if not isinstance(msg, dict):
        return line
    found = _bad_value(msg, "")
    if found is None:
        return line
    where, why = found
    msg_id = msg.get("id")
    if "method" in msg and (
        (isinstance(msg_id, int) and not isinstance(msg_id, bool))
        or (isinstance(msg_id, str) and _bad_string(msg_id, "id") is None)
    ):
        params = {"at": where, "why": why}
        marker = {"jsonrpc": "2.0", "id": msg_id, "method": UNDECODABLE, "params": params}
    elif "id" in msg:
        return line  # no id we could echo: the SDK's parse error (id null) is all there is
    else:
        marker = {"jsonrpc": "2.0", "method": UNDECODABLE, "params": {"at": where, "why": why}}
    return json.dumps(marker) + "\n"


class _Lines:
    """stdin as lines of at most MAX_LINE_BYTES, read in chunks: a longer line is dropped
    while it streams (at most one limit's worth held) and comes out as a `_Refused`."""

    def __init__(self, buffer: IO[bytes], already: bytes = b"") -> None:
        self._read = getattr(buffer, "read1", buffer.read)
        self._buf = bytearray(already)  # read before the SDK ran (early.py)

    def next(self) -> bytes | _Refused | None:
        """The next line (with its newline), a `_Refused` for one over the limit, or None
        at the end of input."""
        limit, skipping, scanned = MAX_LINE_BYTES, False, 0
        while True:
            end = self._buf.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buf[: end + 1])
                del self._buf[: end + 1]
                return _too_long(limit) if skipping or end > limit else line
            if len(self._buf) > limit:
                skipping = True
                self._buf.clear()  # the rest of this line is read and dropped
            scanned = len(self._buf)
            chunk = self._read(_CHUNK)
            if not chunk:  # the input ended: whatever is held is the last line
                line, self._buf = bytes(self._buf), bytearray()
                return _too_long(limit) if skipping else line or None
            self._buf += chunk


def _too_long(limit: int) -> _Refused:
    return _Refused(types.INVALID_REQUEST, f"Invalid Request: a line over {limit} bytes")


def _is_panic(exc: BaseException) -> bool:
    """pyo3's PanicException (a Rust panic in pydantic-core): a BaseException on purpose, so
    nothing catches it by accident; it is a parse failure for us, not a reason to stop."""
    return type(exc).__name__ == "PanicException"


def _message(raw: bytes) -> SessionMessage | Exception:
    """One line parsed once, as the SDK's reader would, or the exception the relay answers."""
    line = _screen(raw.decode("utf-8", errors="replace"))
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:
        return exc
    except BaseException as exc:
        if not _is_panic(exc):
            raise
        return _Refused(types.PARSE_ERROR, "Parse error")
    if isinstance(message, types.JSONRPCNotification) and _has_id(line):
        return _Refused(types.INVALID_REQUEST, "Invalid Request: id must be a string or integer")
    return SessionMessage(message)


def _has_id(line: str) -> bool:
    """Does a line the SDK read as a notification carry an `id` (one it could not use)?"""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError, MemoryError):
        return False
    return isinstance(msg, dict) and "id" in msg


def _next_item(lines: _Lines) -> SessionMessage | Exception | None:
    raw = lines.next()
    if raw is None or isinstance(raw, _Refused):
        return raw
    return _message(raw)


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
    params = message.params or {}
    at = str(params.get("at", "a string"))
    why = str(params.get("why", _NOT_UNICODE))
    in_params = at.removeprefix("key ").startswith("params")
    code = types.INVALID_PARAMS if in_params else types.INVALID_REQUEST
    text = "Invalid params" if in_params else "Invalid Request"
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=message.id,
        error=types.ErrorData(code=code, message=f"{text}: {at} {why}"),
    )


async def _relay(read: Any, forward: Any, write: Any) -> None:
    """Pass messages to the SDK loop; answer undecodable and refused lines ourselves."""
    async with forward:
        async for item in read:
            reply = None
            if isinstance(item, Exception):
                why = str(item) if isinstance(item, _Refused) else type(item).__name__
                log.warning("ignored a line that is not JSON-RPC (%s)", why)
                reply = _wire_error(item)
            elif getattr(item.message, "method", None) == UNDECODABLE:
                log.warning("refused a message with a string or number JSON cannot carry")
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


async def _pump(lines: _Lines, sink: Any) -> None:
    """stdin -> messages (or what to answer instead), read and parsed in a worker thread."""
    async with sink:
        while (item := await anyio.to_thread.run_sync(_next_item, lines)) is not None:
            await sink.send(item)


async def serve_stdio(
    factory: Callable[[], Service], options: ServeOptions, first: FirstLine | None = None
) -> None:
    """Serve until stdin closes; `first`: what `serve` read (and answered) before we ran."""
    first = first or FirstLine()
    holder = ServiceHolder(factory)
    server = build_server(holder, options)
    with _claim_stdin() as wire:
        await _serve(server, holder, _Lines(wire, first.data), first.answered)


async def _drop_reply(replies: Any, write: Any, answered: tuple[int | str, ...]) -> None:
    """The SDK's replies on to the wire, but for its replies to the initialize and tools/list
    `early.py` already answered (the same results: tests/server/test_early_initialize.py).
    Closes the wire when the SDK is done, as `server.run` did: the transport waits for that
    to exit."""
    pending = list(answered)
    async with replies, write:
        async for item in replies:
            message = item.message
            if (
                isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                and message.id in pending
            ):
                pending.remove(message.id)  # once each: a later reuse of the id is the client's
                continue
            try:
                await write.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


async def _serve(
    server: Any, holder: ServiceHolder, lines: _Lines, answered: tuple[int | str, ...] = ()
) -> None:
    # The SDK's transport writes stdout (fd 1 diverted to stderr while it serves); its
    # reader gets no input: `_pump` reads the wire instead.
    no_input = anyio.wrap_file(io.StringIO())
    async with stdio_server(stdin=no_input) as (unused, write):
        unused.close()
        wire, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        forward, inbox = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        replies, outbox = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            tg.start_soon(_pump, lines, wire)
            tg.start_soon(_relay, read, forward, write)
            tg.start_soon(_drop_reply, outbox, write, answered)
            async with replies:
                await server.run(inbox, replies, server.create_initialization_options())
            tg.cancel_scope.cancel()
