"""The real `ontoskills serve` subprocess: SDK stdio client in both eras, raw JSON-RPC bytes
for the older protocol versions, stdout purity, garbage input, live installs, Skills extension.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ontoskills.server.app import TOOL_NAME
from tests.conftest import CliRunner
from tests.server.conftest import serve_command
from tests.server.rawclient import RawServer


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


INIT_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def _call(raw: RawServer, q: str, **extra: Any) -> dict[str, Any]:
    reply = raw.request("tools/call", {"name": TOOL_NAME, "arguments": {"q": q, **extra}})
    assert "result" in reply, reply
    return reply["result"]


def _is_jsonrpc(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str)
    return "id" in message and (("result" in message) ^ ("error" in message))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_stdio_client_both_eras(installed: Path, serve_env: dict[str, str], mode: str) -> None:
    command, args = serve_command()
    params = StdioServerParameters(command=command, args=args, env=serve_env)

    async def main() -> None:
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            tools = (await client.list_tools()).tools
            assert tools[0].input_schema["properties"]["top_k"]["maximum"] == 50
            found = await client.call_tool(TOOL_NAME, {"q": "write an implementation plan"})
            assert found.structured_content["results"][0]["skill"] == "acme/devtools/planning"
            bad = await client.call_tool(TOOL_NAME, {"q": "plan", "top_k": 0})
            assert bad.is_error
            full = await client.call_tool(TOOL_NAME, {"q": "acme/devtools/planning"})
            assert full.structured_content["kind"] == "skill"

    anyio.run(main)


@pytest.mark.parametrize("version", INIT_VERSIONS)
def test_raw_initialize_negotiates_each_handshake_version(
    installed: Path, serve_env: dict[str, str], version: str
) -> None:
    with RawServer(serve_env, "serve") as raw:
        init = raw.initialize(version)
        assert init["result"]["protocolVersion"] == version
        assert init["result"]["serverInfo"]["name"] == "ontoskills"
        result = _call(raw, "review code before merge")
        assert "acme/devtools/reviewing" in result["content"][0]["text"]
        # Older clients read the text; structuredContent (2025-06-18+) rides along unread,
        if version in ("2025-06-18", "2025-11-25"):
            assert result["structuredContent"]["results"][0]["skill"] == "acme/devtools/reviewing"
        assert raw.close() == 0


def test_stdout_carries_only_jsonrpc_and_garbage_is_survived(
    installed: Path, serve_env: dict[str, str]
) -> None:
    with RawServer(serve_env, "serve") as raw:
        raw.initialize("2025-06-18")
        raw.write(b"this is not json\n")
        parse_error = raw.read()
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
        raw.write(b'{"hello": "world"}\n')
        invalid = raw.read()
        assert invalid["id"] is None and invalid["error"]["code"] == -32600
        raw.write(b'{"jsonrpc": "2.0", "id": 77, "method": "no/such/method"}\n')
        assert raw.read()["error"]["code"] == -32601
        raw.write("\u00e9\u00e8 \xff garbage \U0001f600\n".encode() + b"\xc3\x28\n")
        # Invalid UTF-8 is replaced, then fails to parse: one error reply per line.
        assert raw.read()["error"]["code"] == -32700
        assert raw.read()["error"]["code"] == -32700
        unknown = raw.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["error"]["code"] == -32602
        assert _call(raw, "x", top_k=999)["isError"] is True
        missing = raw.request("tools/call", {"name": TOOL_NAME, "arguments": {}})
        assert missing["result"]["isError"] is True
        assert not _call(raw, "debug failing tests")["isError"]
        assert raw.close() == 0
    assert raw.raw, "no output at all"
    for line in raw.raw:
        assert line.endswith(b"\n")
        assert _is_jsonrpc(json.loads(line)), line


def test_live_install_is_served_without_restart(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    with RawServer(serve_env, "serve") as raw:
        raw.initialize("2025-11-25")
        before = _call(raw, "fill a pdf form", top_k=50)["structuredContent"]
        assert "zeta/pdfkit/pdf-forms" not in [r["skill"] for r in before["results"]]
        cli("--registry", str(registry), "install", "zeta/pdfkit", check=True)
        after = _call(raw, "fill a pdf form")["structuredContent"]
        assert after["results"][0]["skill"] == "zeta/pdfkit/pdf-forms"
        assert _call(raw, "zeta/pdfkit/pdf-forms")["structuredContent"]["kind"] == "skill"
        cli("remove", "zeta/pdfkit", check=True)
        gone = _call(raw, "fill a pdf form", top_k=50)["structuredContent"]
        assert "zeta/pdfkit/pdf-forms" not in [r["skill"] for r in gone["results"]]
        assert raw.close() == 0


def test_min_trust_flag(installed: Path, serve_env: dict[str, str]) -> None:
    with RawServer(serve_env, "serve", "--min-trust", "official") as raw:
        raw.initialize("2025-11-25")
        result = _call(raw, "add color to a dull ui, then debug failing tests", top_k=50)[
            "structuredContent"
        ]
        assert result["results"], "min-trust official must still serve the official skills"
        assert {r["trust_tier"] for r in result["results"]} == {"official"}
        assert "acme/design/colorize" not in [r["skill"] for r in result["results"]]
        assert raw.close() == 0


def test_bad_flags_exit_2(cli: CliRunner) -> None:
    for args in (["--min-trust", "gold"], ["--verify", "sometimes"], ["--mode", "magic"]):
        proc = cli("serve", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == ""


def test_skills_extension(installed: Path, serve_env: dict[str, str]) -> None:
    with RawServer(serve_env, "serve") as raw:
        raw.initialize("2025-11-25")
        listed = raw.request("skills/list", {})["result"]
        assert listed["resultType"] == "complete" and "ttlMs" in listed
        uris = {s["uri"]: s for s in listed["skills"]}
        uri = "skill://acme/devtools/debugging/SKILL.md"
        assert uri in uris and "skill://acme/design/colorize/SKILL.md" in uris
        entry = uris[uri]
        assert entry["frontmatter"]["name"] == "debugging"
        digests = {r["uri"]: (r["digest"], r["size"]) for r in entry["resources"]}
        assert uri in digests  # a complete manifest, not "dynamic"
        got = raw.request("skills/get", {"uri": uri})["result"]["skill"]
        assert got == entry
        unknown = raw.request("skills/get", {"uri": "skill://a/b/c/SKILL.md"})
        assert unknown["error"]["code"] == -32602
        read = raw.request("resources/read", {"uri": uri})["result"]["contents"][0]
        assert read["mimeType"] == "text/markdown"
        text = read["text"]
        assert text.startswith("---\nname: debugging\n")
        data = text.encode()  # the bytes a host hashes, exactly as they came over stdio
        assert digests[uri] == ("sha256:" + hashlib.sha256(data).hexdigest(), len(data))
        import yaml

        front = yaml.safe_load(text.split("---\n")[1])
        assert front == entry["frontmatter"]
        assert raw.close() == 0


@pytest.mark.parametrize("verify", ["full", "fast", "none"])
def test_tampered_file_is_not_served_and_reported_on_stderr(
    installed: Path, serve_env: dict[str, str], verify: str
) -> None:
    module = installed / "ontologies/author/acme/devtools/reviewing/ontoskill.ttl"
    module.write_bytes(module.read_bytes() + b"\n# tampered\n")
    with RawServer(serve_env, "serve", "--verify", verify) as raw:
        raw.initialize("2025-11-25")
        result = _call(raw, "review code before merge", top_k=50)["structuredContent"]
        served = [r["skill"] for r in result["results"]]
        assert raw.close() == 0
    stderr = raw.stderr.decode()
    if verify == "none":
        assert "acme/devtools/reviewing" in served
    else:
        assert "acme/devtools/reviewing" not in served
        assert "reviewing/ontoskill.ttl" in stderr, stderr
        # ... and the client is told too (logging capability: warnings by default).
        told = [n for n in raw.notifications if n["method"] == "notifications/message"]
        assert any("reviewing/ontoskill.ttl" in str(n["params"]["data"]) for n in told)
    for line in raw.raw:
        assert _is_jsonrpc(json.loads(line))


def test_pipelined_requests_all_answered(installed: Path, serve_env: dict[str, str]) -> None:
    queries = ["debug failing tests", "review code", "add color", "plan", "acme/devtools/planning"]
    with RawServer(serve_env, "serve") as raw:
        raw.initialize("2025-11-25")
        for i in range(40):  # written back to back, before reading any reply
            q = queries[i % len(queries)]
            params = {"name": TOOL_NAME, "arguments": {"q": q, "top_k": 3}}
            raw.send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": params})
        replies = {}
        for _ in range(40):
            reply = raw.read()
            replies[reply["id"]] = reply
        assert raw.close() == 0
    assert set(replies) == set(range(1000, 1040))
    for i, reply in replies.items():
        assert not reply["result"].get("isError"), reply
        kind = reply["result"]["structuredContent"]["kind"]
        assert kind == ("skill" if queries[(i - 1000) % len(queries)].count("/") else "search")
