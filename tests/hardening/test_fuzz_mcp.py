"""Fuzzing the MCP `ontoskill` tool arguments: through the SDK's own client against the real
server (in-process, real SkillService over a home installed by the CLI), every call answers
with a result (an error result for bad input) and never with the handler's "internal error"
(which means an unhandled exception) nor a protocol error; the home is never written."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from ontoskills.config import load_config
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
from ontoskills.server.app import TOOL_NAME, ServeOptions, ServiceHolder, build_server
from tests.hardening import strategies as hs
from tests.hardening.hostile_check import home_view

queries = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        [
            "acme/devtools/debugging",
            "acme/devtools/../../etc/passwd",
            "../../x",
            "debugging",
            "a" * 5000,
            "\u202e\U000e0041",
            "\ud800",
            "acme/",
            "/",
            "*",
            "' OR 1=1 --",
            "SELECT ?s WHERE { ?s ?p ?o }",
        ]
    ),
)
top_ks = st.one_of(
    st.integers(-5, 60), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3)
)
arguments = st.one_of(
    st.fixed_dictionaries({"q": queries}, optional={"top_k": top_ks}),
    st.dictionaries(st.text(max_size=8), hs.json_values, max_size=3),
    st.none(),
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, baseline: Path) -> Iterator[Path]:
    """A copy of the baseline home (acme/devtools installed by the real CLI)."""
    dest = tmp_path_factory.mktemp("mcp") / "home"
    shutil.copytree(baseline / "home", dest, symlinks=True)
    yield dest


def _calls(home: Path, batch: list[Any]) -> list[types.CallToolResult]:
    def factory() -> SkillService:
        h = Home(home)
        return SkillService(h, h.default_lockfile, load_config(h.config_file))

    async def main() -> list[types.CallToolResult]:
        holder = ServiceHolder(factory)
        server = build_server(holder, ServeOptions())
        out = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
                for args in batch:
                    out.append(await client.call_tool(TOOL_NAME, args))
            tg.cancel_scope.cancel()
        return out

    return anyio.run(main)


@settings(max_examples=int(os.environ.get("FUZZ_MCP_BATCHES", "4")))
@given(st.lists(arguments, min_size=25, max_size=40))
def test_tool_arguments_never_crash_the_handler(home: Path, batch: list[Any]) -> None:
    before = home_view(home)  # state/derived (search cache) may change
    results = _calls(home, batch)
    assert len(results) == len(batch)
    for args, result in zip(batch, results, strict=True):
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        assert "internal error" not in text, (args, text)
        assert text.strip(), args
    assert home_view(home) == before
