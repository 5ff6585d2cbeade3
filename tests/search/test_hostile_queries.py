"""The held-out set's hostile queries (benchmarks/heldout-full.jsonl: prompt injection, a
4,000-character log, punctuation, emoji, mixed scripts, SQL/shell metacharacters, control
characters) and lone surrogates, in every mode, through the service, the MCP tool body and
the CLI: an answer every time, never an exception or an error result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.server.app import ServeOptions, check_arguments, run_tool
from tests.conftest import CliRunner
from tests.helpers.skills import install_synthetic, place_model, service

HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout-full.jsonl"
# A JSON "\ud800" escape decodes to a lone surrogate; so does an undecodable argv byte.
SURROGATES = ["merge pdf \ud800 files", "\udcff", "debug \udcff failing tests"]


def hostile_queries() -> list[str]:
    rows = [json.loads(line) for line in HELDOUT.read_text().splitlines() if line.strip()]
    return [r["q"] for r in rows if r["kind"] == "hostile"]


def test_the_held_out_set_has_its_hostile_queries() -> None:
    queries = hostile_queries()
    assert len(queries) >= 15
    assert any(len(q) >= 4000 for q in queries) and any(not q.isascii() for q in queries)


@pytest.fixture
def modelled(cli: CliRunner, tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    place_model(env)  # the real encoder (skips without ../shared): hybrid is the default
    install_synthetic(cli, tmp_path)
    return env


def test_hostile_queries_get_an_answer_in_every_mode(modelled: dict[str, str]) -> None:
    svc = service(modelled)
    for q in [*hostile_queries(), *SURROGATES]:
        for mode in ("bm25", "semantic", "hybrid"):
            resp = svc.search(q, top_k=5, mode=mode)
            assert resp.confidence in ("high", "low", "none"), (mode, q[:40])
        text, top_k = check_arguments({"q": q, "top_k": 5})
        result = run_tool(svc, text, top_k, ServeOptions())
        assert not result.is_error, (q[:40], result.content)
    assert svc.search("@@@ ?!?! ;;;", mode="hybrid").confidence != "high"


def test_cli_search_with_an_undecodable_argument(modelled: dict[str, str], cli: CliRunner) -> None:
    # Python hands `ontoskills search $'\xff'` over as a lone surrogate (surrogateescape);
    # the default (hybrid) search failed with "internal error: TypeError".
    proc = cli("search", "debug \udcff failing tests", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mode"] == "hybrid"
