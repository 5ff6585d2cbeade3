"""The stdio `initialize` answered before anything heavy is imported or loaded.

A client gives a stdio server a few seconds to answer `initialize` (`gemini mcp list`: 5 s).
Importing the MCP SDK costs ~0.8 s of CPU and the catalog load more; on a machine with 8 busy
processes on 2 cores that was 3.0-4.9 s to the answer (docs/PERFORMANCE.md). So `serve` reads
the first line itself, answers a plain handshake-era `initialize` from here (no SDK, no catalog,
~0.1 s after exec), and only then starts the catalog and imports the SDK. The line is handed
on to the SDK all the same (its session state must commit: client capabilities, negotiated
version) and the SDK's own reply to that id is dropped (`runner._drop_reply`).

What we answer must be what the SDK would: `INITIALIZE_CAPABILITIES` and the version
negotiation mirror `Server.create_initialization_options` and `_negotiate_initialize`, and
tests/server/test_early_initialize.py compares the two byte for byte for every version. Any
first line we are not sure of (not `initialize`, odd params, an unknown version, over
`MAX_FIRST_LINE` bytes, a 2026-07-28 request) is left to the SDK untouched.

Then `answer_tools_list`: the SDK is imported in a thread while we read on, and a plain
`tools/list` after `notifications/initialized` is answered from `toolspec.py` (the tool's JSON,
no SDK), so a busy machine's SDK import (seconds of wall) no longer holds it back. Those lines
go to the SDK too, and its reply to that id is dropped as well.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from .toolspec import tool_json

# declared.INSTRUCTIONS, spelled out: declared.py imports the SDK (the tests compare them).
INSTRUCTIONS = (
    "Call `ontoskill` with a short description of the task to find the right installed "
    "skill, then call it again with the skill id for its overview, then with "
    "'<skill id>#<part id>' for the parts you need. `ontology://schema` describes the "
    "flow and the ontology."
)

# The SDK's HANDSHAKE_PROTOCOL_VERSIONS and LATEST_HANDSHAKE_VERSION (mcp.server.runner).
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What `build_server` declares (checked against the SDK's own answer by the tests).
INITIALIZE_CAPABILITIES: dict[str, Any] = {
    "completions": {},
    "logging": {},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": False},
    "tools": {"listChanged": False},
    "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": True}},
}
SERVER_INFO = {"name": "ontoskills", "title": "OntoSkills", "version": __version__}
# An initialize request is a few hundred bytes; a longer first line is the SDK's to judge.
MAX_FIRST_LINE = 64 * 1024
_CHUNK = 4096


@dataclass(frozen=True)
class FirstLine:
    """What `serve` read from stdin before the SDK ran: handed on to the SDK's loop."""

    data: bytes = b""  # everything read so far (the first line and whatever followed)
    answered: tuple[int | str, ...] = ()  # ids we answered (initialize, tools/list), in order


def read_first_line(fd: int = 0) -> bytes:
    """Bytes from `fd` up to and including the first newline (or EOF, or MAX_FIRST_LINE
    bytes); a chunk may bring more than the line: the caller keeps all of it."""
    buf = bytearray()
    while b"\n" not in buf and len(buf) <= MAX_FIRST_LINE:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:  # a closed or odd stdin: the SDK's loop reports what it finds
            break
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def initialize_reply(line: bytes) -> tuple[int | str, bytes] | None:
    """(id, the JSON-RPC reply line) for a plain handshake-era initialize, else None."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None
    msg_id, params = msg.get("id"), msg.get("params")
    if msg.get("method") != "initialize" or not _plain_id(msg_id) or not _plain(params):
        return None
    assert isinstance(msg_id, int | str) and isinstance(params, dict)  # _plain_id, _plain
    result = {
        "capabilities": INITIALIZE_CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": params["protocolVersion"],
        "serverInfo": SERVER_INFO,
    }
    reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
    return msg_id, json.dumps(reply, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _plain_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**53  # one any JSON reader echoes unchanged
    return isinstance(value, str) and value.isprintable() and len(value) <= 200


def _plain(params: object) -> bool:
    """Params the SDK would accept with no doubt: a known version, the two objects."""
    if not isinstance(params, dict) or params.get("protocolVersion") not in HANDSHAKE_VERSIONS:
        return False
    info, caps = params.get("clientInfo"), params.get("capabilities")
    if not isinstance(info, dict) or not isinstance(caps, dict):
        return False
    if set(params) - {"protocolVersion", "capabilities", "clientInfo"}:
        return False  # `_meta` and the like: the SDK's to read
    return isinstance(info.get("name"), str) and isinstance(info.get("version"), str)


def answer_initialize(fd_in: int = 0, fd_out: int = 1) -> FirstLine:
    """Read the first line; answer it on `fd_out` when it is a plain initialize."""
    data = read_first_line(fd_in)
    line, newline, _rest = data.partition(b"\n")
    found = initialize_reply(line) if newline else None
    if found is None:
        return FirstLine(data)
    msg_id, reply = found
    try:
        _write_all(fd_out, reply)
    except OSError:  # the client went away: the SDK's loop finds that out itself
        return FirstLine(data)
    return FirstLine(data, (msg_id,))


INITIALIZED = "notifications/initialized"
MAX_EARLY_BYTES = 64 * 1024  # what we read ahead for tools/list; more is the SDK's to read
_POLL = 0.05  # seconds between two looks at the SDK import while stdin is quiet


def _next_line(line: bytes) -> str | tuple[int | str, bytes]:
    """"initialized", (id, reply) for a plain tools/list, or "other" (the SDK's)."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return "other"
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return "other"
    if msg.get("method") == INITIALIZED and "id" not in msg:
        return "initialized"
    msg_id, params = msg.get("id"), msg.get("params", {})
    if msg.get("method") != "tools/list" or not _plain_id(msg_id) or params != {}:
        return "other"  # a cursor or `_meta`: the SDK's to read
    assert isinstance(msg_id, int | str)  # _plain_id
    reply = {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [tool_json()]}}
    return msg_id, json.dumps(reply, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def answer_tools_list(
    first: FirstLine, load: Callable[[], None], fd_in: int = 0, fd_out: int = 1
) -> FirstLine:
    """After an early initialize: `load` (the SDK import) runs in a thread while we read on;
    a plain `tools/list` after `notifications/initialized` is answered here (its result is
    static: toolspec.py). Stops at the first other message, at EOF, or once `load` is done
    (the SDK answers from then on). Not on Windows (select() there takes sockets only): the
    SDK answers, as before."""
    if not first.answered or os.name != "posix":
        load()
        return first
    import select

    worker = threading.Thread(target=load, name="ontoskills-sdk-import", daemon=True)
    worker.start()
    data = bytearray(first.data)
    pos = data.index(b"\n") + 1  # the initialize line, answered
    initialized = False
    while len(data) <= MAX_EARLY_BYTES:
        while (end := data.find(b"\n", pos)) != -1:
            step = _next_line(bytes(data[pos:end]))
            pos = end + 1
            if step == "initialized" and not initialized:
                initialized = True
                continue
            if isinstance(step, tuple) and initialized:
                try:
                    _write_all(fd_out, step[1])
                except OSError:
                    break
                worker.join()
                return FirstLine(bytes(data), (*first.answered, step[0]))
            worker.join()
            return FirstLine(bytes(data), first.answered)
        if not worker.is_alive():
            break
        ready, _, _ = select.select([fd_in], [], [], _POLL)
        if ready:
            try:
                chunk = os.read(fd_in, _CHUNK)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    worker.join()
    return FirstLine(bytes(data), first.answered)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
