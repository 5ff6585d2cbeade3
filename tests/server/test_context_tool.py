"""The `ontoskill` tool's skill answers within the context budget: through the SDK's own client
(in-process, both protocol eras) and through `ontoskills serve` on real stdio pipes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from ontoskills.catalog.disclosure import json_chars
from ontoskills.server.app import SCHEMA_URI, TOOL_DESCRIPTION, TOOL_NAME, ServeOptions
from tests.conftest import CliRunner
from tests.helpers.context import chunk_of, walk
from tests.helpers.rich_home import SKILLS, copy_home
from tests.helpers.skills import service
from tests.server.rawclient import RawServer
from tests.server.test_inprocess import ERAS, drive, text_of


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return copy_home(tmp_path_factory, Path(env["ONTOSKILLS_HOME"]))


def size(text: str, data: dict[str, Any]) -> int:
    return len(text) + json_chars(data)


def wire_size(result: types.CallToolResult) -> int:
    return size(text_of(result), result.structured_content or {})


@pytest.mark.parametrize("mode", ERAS)
def test_overview_and_every_part_through_the_sdk_client(home: Path, mode: str) -> None:
    key = SKILLS["pdf"]

    async def body(client: Client) -> Any:
        async def call(q: str) -> tuple[str, dict[str, Any], bool]:
            result = await client.call_tool(TOOL_NAME, {"q": q})
            return text_of(result), result.structured_content or {}, bool(result.is_error)

        return await walk(call, key, size)

    seen = drive(home, mode, body)
    assert seen.overview_structured["kind"] == "skill"
    assert seen.overview_structured["complete"] is False
    assert max(seen.sizes) <= 12_000
    assert seen.pages >= len(seen.parts) > 20
    doc = service({"ONTOSKILLS_HOME": str(home)}).context(key).to_json()
    assert seen.missing(doc) == []


def test_unknown_part_and_page_are_tool_errors(home: Path) -> None:
    key = SKILLS["pdf"]

    async def body(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool(TOOL_NAME, {"q": f"{key}#no-such-part"}),
            await client.call_tool(TOOL_NAME, {"q": f"{key}#knowledge/40"}),
            await client.call_tool(TOOL_NAME, {"q": f"{key}#knowledge"}),  # still serving
        ]

    missing, page, ok = drive(home, "legacy", body)
    assert missing.is_error and "no-such-part" in text_of(missing)
    assert "valid parts:" in text_of(missing) and "knowledge" in text_of(missing)
    assert f"{key}#index" in text_of(missing)
    assert page.is_error
    assert "one page" in text_of(page) and f"{key}#knowledge" in text_of(page)
    assert not ok.is_error and ok.structured_content["part"] == "knowledge"


def test_budget_option_is_honoured_and_pages_chain(home: Path) -> None:
    key = SKILLS["rules"]

    async def body(client: Client) -> list[types.CallToolResult]:
        out = [await client.call_tool(TOOL_NAME, {"q": key})]
        q: str | None = f"{key}#knowledge"
        while q is not None:
            result = await client.call_tool(TOOL_NAME, {"q": q})
            out.append(result)
            q = result.structured_content["next"]
        return out

    results = drive(home, "auto", body, ServeOptions(context_budget=3_000))
    assert all(wire_size(r) <= 3_000 for r in results)
    pages = results[1:]
    assert len(pages) == pages[0].structured_content["pages"] > 100
    assert [r.structured_content["page"] for r in pages] == list(range(1, len(pages) + 1))
    assert f'ontoskill(q="{key}#knowledge/2")' in text_of(pages[0])
    whole = "".join(chunk_of(text_of(r)) for r in pages)
    assert whole.count("\n- [") == 5_000 - 1_000  # every rule with a severity (1 in 5 has none)


def test_schema_and_tool_description_explain_the_flow(home: Path) -> None:
    async def body(client: Client) -> tuple[str, str]:
        tools = (await client.list_tools()).tools
        read = await client.read_resource(SCHEMA_URI)
        return tools[0].description or "", read.contents[0].text  # type: ignore[union-attr]

    description, schema_text = drive(home, "legacy", body)
    assert description == TOOL_DESCRIPTION
    assert "#<part id>" in description and "/2" in description
    schema = json.loads(schema_text)
    assert next(iter(schema)) == "flow" and "#<part id>" in schema["flow"]
    assert schema["classes"] and len(schema_text.encode()) < 4096


def _overview_size(env: dict[str, str], *args: str) -> int:
    with RawServer(env, "serve", *args) as raw:
        raw.initialize("2025-11-25")
        reply = raw.request("tools/call", {"name": TOOL_NAME, "arguments": {"q": SKILLS["rules"]}})
        result = reply["result"]
        assert not result.get("isError"), result
        text = "".join(c["text"] for c in result["content"])
        assert raw.close() == 0
    return size(text, result["structuredContent"])


def test_serve_flag_and_config_setting_over_stdio(
    home: Path, serve_env: dict[str, str], cli: CliRunner
) -> None:
    default = _overview_size(serve_env)
    assert 11_000 < default <= 12_000  # 5,000 rules fill the overview up to the budget
    assert _overview_size(serve_env, "--context-budget", "3000") <= 3_000
    (home / "config.toml").write_text("[serve]\ncontext_budget = 4000\n")
    from_config = _overview_size(serve_env)
    assert 3_000 < from_config <= 4_000
    assert _overview_size(serve_env, "--context-budget", "2500") <= 2_500  # the flag wins

    bad = cli("serve", "--context-budget", "10")
    assert bad.returncode == 2 and "--context-budget" in bad.stderr and "hint:" in bad.stderr
    (home / "config.toml").write_text("[serve]\ncontext_budget = 'big'\n")
    broken = cli("serve")
    assert broken.returncode == 2 and "serve.context_budget" in broken.stderr


def test_show_parts_on_the_cli(home: Path, cli: CliRunner) -> None:
    key = SKILLS["pdf"]
    part = cli("show", f"{key}#knowledge", check=True).stdout
    assert part.startswith("# Knowledge: 60 rules")
    doc = json.loads(cli("show", f"{key}#section-reference", "--json", check=True).stdout)
    assert doc["part"] == "section-reference" and doc["kind"] == "section"
    assert "Topic 11" in doc["text"] and doc["chars"] == len(doc["text"])
    page = json.loads(cli("show", f"{SKILLS['rules']}#knowledge/2", "--json", check=True).stdout)
    assert page["page"] == 2 and page["kind"] == "skill-part"
    assert (
        size(page["text"], {k: v for k, v in page.items() if k not in ("text", "schema_version")})
        <= 12_000
    )
    unknown = cli("show", f"{key}#nope")
    assert unknown.returncode == 7 and "valid parts" in unknown.stderr
    full = cli("show", key, check=True).stdout  # unchanged: the whole context for humans
    # (tier: an ad-hoc --registry is capped at community since issue 13 class 9)
    assert full.startswith(f"# {key} [") and "Topic 11" in full
