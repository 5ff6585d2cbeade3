"""`serve` over stdio answers a plain `initialize` before it imports the SDK or loads the
catalog (server/early.py), with the very answer the SDK gives, and the session goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ontoskills.server import early
from tests.server.rawclient import RawServer

VERSIONS = early.HANDSHAKE_VERSIONS
CLIENT = {"name": "raw-test", "version": "0"}

# Holds the real SDK's import (`import mcp...`) until a file exists: shows what is answered
# before the SDK is loaded. Everything else imports as usual.
GATE = """
import os, sys, time
gate = sys.argv[1]
class Gate:
    def find_spec(self, name, path=None, target=None):
        while name in ("mcp", "mcp_types") and not os.path.exists(gate):
            time.sleep(0.02)
        return None
sys.meta_path.insert(0, Gate())
sys.argv = ["ontoskills", *sys.argv[2:]]
from ontoskills.cli import main
main()
"""


def _init(version: str, msg_id: Any = 1, **extra: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT, **extra}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


@pytest.mark.parametrize("version", VERSIONS)
def test_the_early_answer_is_the_sdks(
    installed: Path, serve_env: dict[str, str], version: str
) -> None:
    """Byte for byte what the SDK answers (`_meta` in params: the early path declines it and
    the SDK answers), so a new capability or SDK change cannot make the two drift apart."""
    with RawServer(serve_env, "serve") as raw:
        raw.send(_init(version, _meta={}))
        sdk = raw.read()
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    found = early.initialize_reply(json.dumps(_init(version)).encode())
    assert found is not None
    assert json.loads(found[1])["result"] == sdk["result"]
    assert sdk["result"]["protocolVersion"] == version


def test_initialize_is_answered_before_the_sdk_is_imported(
    installed: Path, serve_env: dict[str, str], tmp_path: Path
) -> None:
    """The SDK import held back: the handshake is answered all the same (before: no answer
    until the SDK was loaded). Once it loads, the session goes on, and the SDK's own reply
    to the initialize is not sent a second time."""
    gate = tmp_path / "open"
    with RawServer(serve_env, str(gate), "serve", entry=("-c", GATE)) as raw:
        raw.send(_init("2025-06-18", "first"))
        reply = raw.read(timeout=60)
        assert reply["id"] == "first" and reply["result"]["serverInfo"]["name"] == "ontoskills"
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        raw._next_id = 10
        gate.touch()
        listed = raw.request("tools/list")
        assert listed["result"]["tools"][0]["name"] == "ontoskill"
        # The SDK's reply to "first" would have come before the tools/list reply.
        ids = [json.loads(line).get("id") for line in raw.raw]
        assert ids.count("first") == 1
        raw.proc.kill()  # the gate's import hook is not ours to test at interpreter exit


def test_pipelined_messages_after_the_early_answer_are_served(
    installed: Path, serve_env: dict[str, str]
) -> None:
    """A client that writes initialize and its next requests at once: all read, one reply
    each."""
    lines = [
        _init("2025-11-25", 7),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},  # the id reused: the client's business
    ]
    with RawServer(serve_env, "serve") as raw:
        raw.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        replies = [raw.read() for _ in range(3)]
    assert [r["id"] for r in replies] == [7, 8, 7]
    assert "protocolVersion" in replies[0]["result"] and replies[2]["result"] == {}


@pytest.mark.parametrize(
    "message",
    [
        _init("2099-01-01"),  # a version we do not know: the SDK negotiates
        _init("2025-06-18", True),  # a bool is no id
        _init("2025-06-18", 2**60),  # an id a JSON reader might round
        _init("2025-06-18", _meta={"x": 1}),
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {}}},
        {"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": _init("2025-06-18")},
        [_init("2025-06-18")],
    ],
)
def test_anything_unsure_is_left_to_the_sdk(message: Any) -> None:
    assert early.initialize_reply(json.dumps(message).encode()) is None


def test_odd_first_lines_are_left_to_the_sdk() -> None:
    for line in (b"", b"not json", b"\xff\xfe", b'{"a": ' * 10_000):
        assert early.initialize_reply(line) is None


@pytest.mark.parametrize("version", VERSIONS)
def test_a_refused_first_line_is_answered_by_the_sdk(
    installed: Path, serve_env: dict[str, str], version: str
) -> None:
    """Garbage first: the SDK's parse error, then a normal handshake."""
    with RawServer(serve_env, "serve") as raw:
        raw.write(b"garbage\n")
        assert raw.read()["error"]["code"] == -32700
        assert raw.initialize(version)["result"]["protocolVersion"] == version


TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.mark.parametrize("version", VERSIONS)
def test_the_early_tools_list_is_the_sdks(
    installed: Path, serve_env: dict[str, str], version: str
) -> None:
    """The SDK's own tools/list answer (its initialize taken: `_meta` declines the early
    path), compared with what early.py sends for the same request."""
    with RawServer(serve_env, "serve") as raw:
        raw.send(_init(version, _meta={}))
        raw.read()
        raw.send(INITIALIZED)
        raw.send(TOOLS_LIST)
        sdk = raw.read()
    step = early._next_line(json.dumps(TOOLS_LIST).encode())
    assert isinstance(step, tuple) and step[0] == 2
    assert json.loads(step[1])["result"] == sdk["result"]


def test_tools_list_is_answered_before_the_sdk_is_imported(
    installed: Path, serve_env: dict[str, str], tmp_path: Path
) -> None:
    """The SDK import held back: tools/list answered all the same (before: not until the
    SDK was loaded, seconds on a busy machine); the SDK's duplicate is not sent, and once it
    loads it answers the next one."""
    gate = tmp_path / "open"
    with RawServer(serve_env, str(gate), "serve", entry=("-c", GATE)) as raw:
        raw.send(_init("2025-11-25", 1))
        assert raw.read(timeout=60)["id"] == 1
        raw.send(INITIALIZED)
        raw.send(TOOLS_LIST)
        listed = raw.read(timeout=60)
        assert listed["id"] == 2 and listed["result"]["tools"][0]["name"] == "ontoskill"
        gate.touch()
        raw._next_id = 10
        again = raw.request("tools/list")
        assert again["result"] == listed["result"]
        ids = [json.loads(line).get("id") for line in raw.raw]
        assert ids.count(2) == 1 and ids.count(1) == 1
        raw.proc.kill()


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "1"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {}}},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "notifications/initialized"},
        [TOOLS_LIST],
    ],
)
def test_unsure_next_lines_are_left_to_the_sdk(message: Any) -> None:
    assert early._next_line(json.dumps(message).encode()) == "other"


def test_a_request_before_initialized_stops_the_early_path(
    installed: Path, serve_env: dict[str, str]
) -> None:
    """tools/list before `notifications/initialized`: the SDK's to answer (one reply)."""
    with RawServer(serve_env, "serve") as raw:
        raw.write(
            b"".join(json.dumps(m).encode() + b"\n" for m in (_init("2025-11-25"), TOOLS_LIST))
        )
        replies = [raw.read(timeout=60) for _ in range(2)]
        raw.send(INITIALIZED)
        raw._next_id = 10
        assert raw.request("ping")["result"] == {}
        ids = [json.loads(line).get("id") for line in raw.raw]
    assert [r["id"] for r in replies] == [1, 2] and ids.count(2) == 1
