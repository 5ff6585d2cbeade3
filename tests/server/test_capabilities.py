"""Prompts, completion and the logging capability, through the SDK's own client (both eras),
over the real SkillService on a home installed by the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from ontoskills.server.app import ServeOptions
from tests.conftest import CliRunner
from tests.server.test_inprocess import ERAS, drive

PROMPT = types.PromptReference(type="ref/prompt", name="ontoskill")
SKILL_MD = types.ResourceTemplateReference(
    type="ref/resource", uri="skill://{author}/{package}/{skill}/SKILL.md"
)
FILE = types.ResourceTemplateReference(
    type="ref/resource", uri="skill://{author}/{package}/{skill}/{+path}"
)


def text(result: types.GetPromptResult) -> str:
    (message,) = result.messages
    assert message.role == "user" and isinstance(message.content, types.TextContent)
    return message.content.text


@pytest.mark.parametrize("mode", ERAS)
def test_ontoskill_prompt_answers_like_the_tool(installed: Path, mode: str) -> None:
    async def body(client: Client) -> None:
        listed = (await client.list_prompts()).prompts
        assert [p.name for p in listed] == ["ontoskill"]
        assert listed[0].arguments and listed[0].arguments[0].required
        search = await client.get_prompt("ontoskill", {"q": "debug failing tests"})
        assert "acme/devtools/debugging" in text(search)
        skill = await client.get_prompt("ontoskill", {"q": "acme/devtools/debugging"})
        tool = await client.call_tool("ontoskill", {"q": "acme/devtools/debugging"})
        assert text(skill) == tool.content[0].text  # type: ignore[union-attr]
        for bad in ({}, {"q": "  "}):
            with pytest.raises(MCPError) as info:
                await client.get_prompt("ontoskill", bad)
            assert info.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as info:
            await client.get_prompt("debugging", {})  # per-skill prompts are off by default
        assert info.value.error.code == types.INVALID_PARAMS

    drive(installed, mode, body)


def test_one_prompt_per_skill_behind_the_flag(installed: Path) -> None:
    async def body(client: Client) -> None:
        names = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(names) == {"ontoskill", "debugging", "planning", "reviewing", "colorize"}
        assert names["debugging"].title == "acme/devtools/debugging"
        overview = await client.get_prompt("debugging")
        tool = await client.call_tool("ontoskill", {"q": "acme/devtools/debugging"})
        assert text(overview) == tool.content[0].text  # type: ignore[union-attr]

    drive(installed, "legacy", body, ServeOptions(prompts=True))
    # --min-trust applies to prompts as to everything else.
    drive(
        installed,
        "legacy",
        lambda c: _names_are(c, {"ontoskill", "debugging", "planning", "reviewing"}),
        ServeOptions(prompts=True, min_trust="official"),
    )


async def _names_are(client: Client, expected: set[str]) -> None:
    assert {p.name for p in (await client.list_prompts()).prompts} == expected


@pytest.mark.parametrize("mode", ERAS)
def test_completion_of_ids_parts_and_uris(installed: Path, mode: str) -> None:
    async def body(client: Client) -> dict[str, list[str]]:
        async def values(ref: Any, name: str, value: str, **given: str) -> list[str]:
            done = await client.complete(ref, {"name": name, "value": value}, given or None)
            return done.completion.values

        return {
            "key": await values(PROMPT, "q", "acme/dev"),
            "short": await values(PROMPT, "q", "plan"),
            "words": await values(PROMPT, "q", "plan the"),
            "parts": await values(PROMPT, "q", "acme/devtools/debugging#"),
            "author": await values(SKILL_MD, "author", "ac"),
            "package": await values(SKILL_MD, "package", "de", author="acme"),
            "skill": await values(SKILL_MD, "skill", "", author="acme", package="devtools"),
            "path": await values(
                FILE, "path", "", author="acme", package="devtools", skill="debugging"
            ),
            "other": await values(types.PromptReference(type="ref/prompt", name="nope"), "x", "a"),
        }

    got = drive(installed, mode, body)
    assert got["key"] == [
        "acme/devtools/debugging",
        "acme/devtools/planning",
        "acme/devtools/reviewing",
    ]
    assert got["short"] == ["planning"]
    assert got["words"] == []
    assert "acme/devtools/debugging#about" in got["parts"]
    assert got["author"] == ["acme"]
    assert got["package"] == ["design", "devtools"]
    assert got["skill"] == ["debugging", "planning", "reviewing"]
    assert "SKILL.md" in got["path"] and "ontoskill.ttl" in got["path"]
    assert got["other"] == []


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_logging_tells_the_client_about_reloads_and_unserved_files(
    installed: Path, cli: CliRunner, registry: Path
) -> None:
    module = installed / "ontologies/author/acme/devtools/reviewing/ontoskill.ttl"
    module.write_bytes(module.read_bytes() + b"\n# tampered\n")
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async def body(client: Client) -> None:
        await client.call_tool("ontoskill", {"q": "plan"})
        warned = [m for m in got if m.level == "warning"]
        assert warned and "reviewing/ontoskill.ttl" in str(warned[0].data)
        assert warned[0].logger == "ontoskills"
        await client.set_logging_level("info")
        await anyio.to_thread.run_sync(
            lambda: cli("--registry", "sample", "install", "zeta/pdfkit", check=True)
        )
        await client.call_tool("ontoskill", {"q": "fill a pdf form"})
        await client.call_tool("ontoskill", {"q": "fill a pdf form"})
        info = [str(m.data) for m in got if m.level == "info"]
        assert info == ["installed skills changed: now serving 4 skills"]  # told once
        assert len([m for m in got if m.level == "warning"]) == len(warned)  # not repeated

    drive(installed, "legacy", body, logging_callback=on_log)


def test_capabilities_are_declared(installed: Path) -> None:
    async def body(client: Client) -> types.ServerCapabilities:
        return client.server_capabilities  # type: ignore[return-value]

    caps = drive(installed, "legacy", body)
    assert caps.prompts is not None and caps.completions is not None
    assert caps.logging is not None and caps.resources is not None


def test_a_bad_list_cursor_is_invalid_params(installed: Path) -> None:
    """prompts/list and resources/list page by offset: a cursor that is not a non-negative
    integer is the protocol's invalid-params error, never a crash or a silent first page."""

    async def body(client: Client) -> list[int]:
        codes = []
        for listing in (client.list_prompts, client.list_resources):
            for cursor in ("x", "-1"):
                with pytest.raises(MCPError) as err:
                    await listing(cursor=cursor)
                codes.append(err.value.error.code)
            await listing(cursor="0")  # the first page, as with no cursor
        return codes

    assert drive(installed, "legacy", body) == [types.INVALID_PARAMS] * 4
