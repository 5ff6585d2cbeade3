"""Issue 13 class 8 (part): a JSON-RPC request whose strings cannot be decoded.

`"\\ud800"` is valid JSON but no Unicode string: the SDK's parser refused the whole line,
so the client got only a parse error with id null and waited forever for its answer. Over a
real `ontoskills serve` subprocess: the error carries the request's own id, serving goes on,
stdout carries only JSON-RPC, and notifications get no answer at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.server.runner import UNDECODABLE, _screen
from tests.server.rawclient import RawServer


def _call(request_id: object, q_escape: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + json.dumps(request_id).encode()
        + b',"method":"tools/call","params":{"name":"ontoskill","arguments":{"q":"'
        + q_escape.encode()
        + b'"}}}\n'
    )


@pytest.fixture
def raw(tmp_path: Path) -> RawServer:
    env = {"ONTOSKILLS_HOME": str(tmp_path / "home"), "ONTOSKILLS_CACHE_DIR": str(tmp_path / "c")}
    server = RawServer({**env, "CI": "true", "NO_COLOR": "1"}, "serve")
    server.initialize("2025-06-18")
    yield server  # type: ignore[misc]
    server.close()


@pytest.mark.parametrize(
    ("request_id", "escape"),
    [
        (7, "\\ud800"),  # lone high surrogate
        ("req-7", "\\udfff tail"),  # lone low surrogate, string id
        (8, "ok \\ude00\\ud83d"),  # a pair in the wrong order
        (9, "\\uD800"),  # upper-case hex
    ],
)
def test_undecodable_strings_get_an_error_with_their_own_id(
    raw: RawServer, request_id: object, escape: str
) -> None:
    raw.write(_call(request_id, escape))
    reply = raw.read()
    assert reply["id"] == request_id, reply
    assert reply["error"]["code"] == -32602
    assert "params.arguments.q" in reply["error"]["message"]
    assert "not valid Unicode" in reply["error"]["message"]
    # serving goes on, and a valid surrogate pair is just an emoji
    raw.write(_call(100, "\\ud83d\\ude00 lint"))
    ok = raw.read()
    assert ok["id"] == 100 and "result" in ok, ok


def test_undecodable_key_method_and_notification(raw: RawServer) -> None:
    raw.write(
        b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"ontoskill",'
        b'"arguments":{"\\udc00":"x","q":"y"}}}\n'
    )
    reply = raw.read()
    assert reply["id"] == 11 and reply["error"]["code"] == -32602, reply
    raw.write(b'{"jsonrpc":"2.0","id":12,"method":"tools/\\ud800"}\n')
    reply = raw.read()
    assert reply["id"] == 12 and reply["error"]["code"] == -32600, reply
    # a notification is never answered, not even with an error
    raw.write(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}\n')
    raw.write(b'{"jsonrpc":"2.0","id":13,"method":"tools/list"}\n')
    reply = raw.read()
    assert reply["id"] == 13 and "result" in reply, reply
    # an id that is itself undecodable cannot be echoed: the one case left with id null
    raw.write(b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}\n')
    reply = raw.read()
    assert reply["id"] is None and "error" in reply
    assert raw.close() == 0
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in raw.raw)
    assert "Traceback" not in raw.stderr.decode()


def test_screen_leaves_ordinary_lines_alone() -> None:
    for line in (
        '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        '{"jsonrpc":"2.0","id":1,"params":{"q":"\\ud83d\\ude00"},"method":"x"}\n',  # a pair
        "not json at all \\ud800\n",
        '["\\ud800"]\n',  # a batch: not ours to rewrite
    ):
        assert _screen(line) == line
    marker = json.loads(_screen('{"jsonrpc":"2.0","id":3,"method":"m","params":["\\ud800"]}'))
    assert marker["id"] == 3 and marker["method"] == UNDECODABLE
    assert marker["params"]["at"].startswith("params[0]")
