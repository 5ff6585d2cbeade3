"""The `ontoskill` search answer through the SDK's own client: confidence in words and in
structured content, disabled skills named (never served), copies, and its size."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from ontoskills.server.answers import BUDGET, answer_size
from ontoskills.server.app import TOOL_NAME
from tests.conftest import CliRunner, shared_path
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import install_ontostore
from tests.server.test_inprocess import drive, text_of


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def size_of(result: types.CallToolResult) -> int:
    return answer_size(text_of(result), result.structured_content or {})


def test_empty_home_says_how_to_install(env: dict[str, str]) -> None:
    async def body(client: Client) -> types.CallToolResult:
        return await client.call_tool(TOOL_NAME, {"q": "fill a pdf form"})

    result = drive(Path(env["ONTOSKILLS_HOME"]), "legacy", body)
    assert not result.is_error
    assert result.structured_content["confidence"] == "none"
    assert result.structured_content["installed_skills"] == 0
    assert "No skills are installed" in text_of(result)
    assert "ontoskills install author/pkg" in text_of(result)


def _opt_in_registry(root: Path) -> Path:
    return build_registry(
        root,
        [
            PackageSpec(
                id="acme/tools",
                skills=[
                    SkillSpec("planning", "Write an implementation plan", intents=("plan",)),
                    SkillSpec(
                        "lean-proofs",
                        "Repair Lean 4 proofs: eliminate sorry, fix instance synthesis",
                        intents=("eliminate sorry from a lean lemma",),
                        default_enabled=False,
                    ),
                ],
            )
        ],
    )


def test_disabled_skill_is_named_with_its_enable_command_never_served(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    cli("--registry", str(_opt_in_registry(tmp_path / "reg")), "install", "acme/tools", check=True)

    async def body(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool(TOOL_NAME, {"q": "acme/tools/lean-proofs"}),
            await client.call_tool(TOOL_NAME, {"q": "eliminate sorry in my lean lemma"}),
            await client.call_tool(TOOL_NAME, {"q": "write an implementation plan"}),
        ]

    by_id, by_words, other = drive(Path(env["ONTOSKILLS_HOME"]), "auto", body)
    enable = "ontoskills enable acme/tools/lean-proofs"
    for result in (by_id, by_words):
        assert not result.is_error
        data = result.structured_content
        assert data["kind"] == "search"  # not the skill's context
        assert data["disabled"] == [{"skill": "acme/tools/lean-proofs", "enable": enable}]
        assert "acme/tools/lean-proofs" not in [r["skill"] for r in data["results"]]
        assert enable in text_of(result)
        assert "Repair Lean 4 proofs" not in text_of(result)  # nothing of it is served
    assert "acme/tools/lean-proofs is installed but disabled" in text_of(by_id)
    assert by_words.structured_content["confidence"] != "high"
    assert other.structured_content["disabled"] == []
    assert other.structured_content["confidence"] == "high"
    assert text_of(other).startswith('Strong match for "write an implementation plan"')


def test_answer_fits_the_budget_with_long_descriptions_and_many_copies(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    long = "Convert, merge and split PDF documents " + "with many options " * 300
    packages = [
        PackageSpec(
            id=f"author{n:02d}/kit-with-a-rather-long-package-name",
            skills=[
                SkillSpec(
                    f"pdf-toolkit-{k}",
                    long,
                    intents=("merge pdf documents " + "and more " * 40,),
                    content_hash=f"hash{k}",
                )
                for k in range(6)
            ],
        )
        for n in range(8)
    ]
    reg = build_registry(tmp_path / "reg", packages)
    cli("--registry", str(reg), "install", *[p.id for p in packages], check=True)

    async def body(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool(TOOL_NAME, {"q": q, "top_k": 5})
            for q in ("merge pdf documents", "x" * 16_000, "options")
        ]

    for result in drive(Path(env["ONTOSKILLS_HOME"]), "legacy", body):
        assert size_of(result) <= BUDGET, (size_of(result), text_of(result))
        data = result.structured_content
        assert data["kind"] == "search"
        for r in data["results"]:  # identifiers and counts, no second copy of the text
            assert set(r) <= {"skill", "score", "trust_tier", "also_in", "more_copies"}
            assert len(r["also_in"]) + r.get("more_copies", 0) == 7


def test_answers_over_the_shared_store_fit_the_budget(cli: CliRunner, env: dict[str, str]) -> None:
    install_ontostore(cli, model=False)
    queries = [
        json.loads(line)["q"]
        for name in ("queries-dev.jsonl", "queries-full-dev.jsonl")
        for line in shared_path(name).read_text().splitlines()
        if line.strip()
    ]

    async def body(client: Client) -> list[types.CallToolResult]:
        return [await client.call_tool(TOOL_NAME, {"q": q, "top_k": 5}) for q in queries]

    results = drive(Path(env["ONTOSKILLS_HOME"]), "legacy", body)
    searches = [r for r in results if r.structured_content["kind"] == "search"]
    assert len(searches) > 200
    assert max(size_of(r) for r in searches) <= BUDGET
    assert all(r.structured_content["confidence"] in ("high", "low", "none") for r in searches)
