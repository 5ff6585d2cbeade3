"""The server through the SDK's own client, in-process, in both protocol eras, over the real
SkillService on a home installed by the real CLI."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from ontoskills.config import load_config
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
from ontoskills.server.app import (
    MAX_TOP_K,
    SCHEMA_URI,
    TOOL_NAME,
    ServeOptions,
    ServiceHolder,
    build_server,
)

T = TypeVar("T")
ERAS = ("legacy", "auto")  # legacy = initialize handshake (2025-11-25); auto -> 2026-07-28


def drive(
    home: Path,
    mode: str,
    fn: Callable[[Client], Awaitable[T]],
    options: ServeOptions | None = None,
    **client: Any,
) -> T:
    """Serve `home` in-process and run `fn` with an SDK client of era `mode` (`client`: more
    Client arguments, e.g. a logging callback)."""

    def factory() -> SkillService:
        h = Home(home)
        return SkillService(h, h.default_lockfile, load_config(h.config_file))

    async def main() -> T:
        holder = ServiceHolder(factory)
        server = build_server(holder, options or ServeOptions())
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            async with Client(server, mode=mode, **client) as c:  # type: ignore[arg-type]
                result = await fn(c)
            tg.cancel_scope.cancel()
        return result

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("mode", ERAS)
def test_era_tools_and_search(installed: Path, mode: str) -> None:
    async def body(client: Client) -> None:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.protocol_version == expected
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == [TOOL_NAME]
        schema = tools[0].input_schema
        assert schema["required"] == ["q"]
        assert schema["properties"]["top_k"]["minimum"] == 1
        assert schema["properties"]["top_k"]["maximum"] == MAX_TOP_K
        assert "skill" in (tools[0].description or "").lower()

        found = await client.call_tool(TOOL_NAME, {"q": "debug failing tests", "top_k": 3})
        assert not found.is_error
        data = found.structured_content
        assert data["kind"] == "search"
        assert data["results"][0]["skill"] == "acme/devtools/debugging"
        assert len(data["results"]) <= 3
        assert "acme/devtools/debugging" in text_of(found)

        full = await client.call_tool(TOOL_NAME, {"q": "acme/devtools/debugging"})
        assert not full.is_error
        data = full.structured_content
        assert data["kind"] == "skill" and data["skill"] == "acme/devtools/debugging"
        assert data["complete"] is True  # a small skill comes whole
        # structuredContent carries ids and sizes; the text is not repeated there.
        assert "failing tests" in text_of(full).lower()
        assert "failing tests" not in json.dumps(data).lower()

    drive(installed, mode, body)


@pytest.mark.parametrize("mode", ERAS)
def test_bad_arguments_are_tool_errors_and_serving_goes_on(installed: Path, mode: str) -> None:
    bad: list[dict[str, Any]] = [
        {"q": "x", "top_k": 0},
        {"q": "x", "top_k": 999},
        {"q": "x", "top_k": "5"},
        {"q": "x", "top_k": True},
        {"q": "x", "top_k": 2.5},
        {},
        {"q": 42},
        {"q": ""},
        {"q": "   "},
        {"q": "x", "limit": 3},
    ]

    async def body(client: Client) -> None:
        for args in bad:
            result = await client.call_tool(TOOL_NAME, args)
            assert result.is_error, args
            assert text_of(result), args
        with pytest.raises(MCPError) as info:
            await client.call_tool("no_such_tool", {"q": "x"})
        assert info.value.error.code == types.INVALID_PARAMS
        big = await client.call_tool(TOOL_NAME, {"q": "review code " * 900})  # ~10 kB
        assert not big.is_error
        ok = await client.call_tool(TOOL_NAME, {"q": "review code", "top_k": 1})
        assert not ok.is_error
        assert ok.structured_content["results"][0]["skill"] == "acme/devtools/reviewing"

    drive(installed, mode, body)


@pytest.mark.parametrize("mode", ERAS)
def test_schema_resource_and_unknown_resource(installed: Path, mode: str) -> None:
    async def body(client: Client) -> None:
        listed = (await client.list_resources()).resources
        assert SCHEMA_URI in [str(r.uri) for r in listed]
        read = await client.read_resource(SCHEMA_URI)
        text = read.contents[0].text  # type: ignore[union-attr]
        assert len(text.encode()) < 4096
        assert isinstance(json.loads(text), dict)
        with pytest.raises(MCPError) as info:
            await client.read_resource("ontology://nope")
        assert info.value.error.code == types.INVALID_PARAMS
        # A tool call still works after the protocol error.
        assert not (await client.call_tool(TOOL_NAME, {"q": "add color"})).is_error

    drive(installed, mode, body)


def test_min_trust_hides_lower_tiers_from_search_and_lookup(installed: Path) -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        search = await client.call_tool(
            TOOL_NAME, {"q": "add color, then debug failing tests", "top_k": 50}
        )
        lookup = await client.call_tool(TOOL_NAME, {"q": "acme/design/colorize"})
        return search.structured_content, lookup.structured_content

    search, lookup = drive(installed, "legacy", body, ServeOptions(min_trust="official"))
    assert search["results"], "the official skills are still served"
    assert all(r["trust_tier"] == "official" for r in search["results"])
    assert "acme/design/colorize" not in [r["skill"] for r in search["results"]]
    assert lookup["kind"] == "search"  # community skill is not served as context
    open_search, _ = drive(installed, "legacy", body)
    assert "acme/design/colorize" in [r["skill"] for r in open_search["results"]]


def test_missing_lock_is_reported_not_fatal(env: dict[str, str]) -> None:
    async def body(client: Client) -> types.CallToolResult:
        await client.list_tools()
        return await client.call_tool(TOOL_NAME, {"q": "anything"})

    result = drive(Path(env["ONTOSKILLS_HOME"]), "legacy", body)
    # An empty home either serves nothing or explains why; it never kills the server.
    if result.is_error:
        assert text_of(result)
    else:
        assert result.structured_content["results"] == []


def test_broken_lock_at_start_is_reported_then_recovered_without_restart(installed: Path) -> None:
    lock = installed / "ontoskills.lock"
    good = lock.read_bytes()
    lock.write_text("<<<<<<< HEAD\nnot a lock\n")

    async def body(client: Client) -> tuple[types.CallToolResult, types.CallToolResult]:
        broken = await client.call_tool(TOOL_NAME, {"q": "review code"})
        lock.write_bytes(good)
        return broken, await client.call_tool(TOOL_NAME, {"q": "review code"})

    broken, fixed = drive(installed, "legacy", body)
    assert broken.is_error and "hint:" in text_of(broken)
    assert not fixed.is_error
    assert fixed.structured_content["results"][0]["skill"] == "acme/devtools/reviewing"


def test_tool_bounds_match_the_search_service() -> None:
    from ontoskills.search import service

    assert MAX_TOP_K == service.MAX_TOP_K
