"""When the best match is a disabled skill, the served list is not called `high` and the
answer names the disabled skill with its enable command (issue 26: "check citations in a
paper" answered `high` over served results at 0.24 while the real match, 0.80, was off)."""

from __future__ import annotations

import json

import pytest

from ontoskills.config import load_config
from ontoskills.paths import Home
from ontoskills.search import confidence
from ontoskills.search.answer import build_response
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize
from ontoskills.server.answers import search_text
from tests.conftest import CliRunner
from tests.helpers.skills import installed_home

from .test_stages import make_ranker


def test_a_disabled_best_match_makes_the_served_list_low() -> None:
    ranker = make_ranker()
    # omega (disabled) holds every word; the served alpha holds two of three, which on its
    # own is plenty for `high` by words
    ranking = ranker.rank(tokenize("parse invoices receipts"), None, "bm25", -1, 5, None)
    assert ranker.records[ranking.disabled[0].index].key == "a/one/omega"
    assert ranking.hits and ranking.disabled[0].score > ranking.hits[0].score
    assert ranking.disabled_best
    words = ranking.coverage - ranking.unknown
    assert words >= confidence.COVERAGE_HIGH  # the served top alone would be `high`
    assert confidence.judge(ranking, "bm25", False, ranker.n_enabled) == "low"


def test_a_served_best_match_is_judged_on_its_own_evidence() -> None:
    ranker = make_ranker()
    ranking = ranker.rank(tokenize("translate invoices"), None, "bm25", -1, 5, None)
    assert ranker.records[ranking.hits[0].index].key == "a/one/delta"
    assert not ranking.disabled_best
    assert confidence.judge(ranking, "bm25", False, ranker.n_enabled) == "high"


def test_a_looked_up_skill_is_never_outscored_by_a_disabled_one() -> None:
    ranker = make_ranker()
    ranking = ranker.rank(tokenize("parse invoices receipts"), None, "bm25", -1, 5, 2)
    assert not ranking.disabled_best
    assert confidence.judge(ranking, "bm25", True, ranker.n_enabled) == "high"


def test_the_answer_names_the_disabled_best_match_and_how_to_enable_it() -> None:
    ranker = make_ranker()
    ranking = ranker.rank(tokenize("parse invoices receipts"), None, "bm25", -1, 5, None)
    judged = confidence.judge(ranking, "bm25", False, ranker.n_enabled)
    response = build_response(
        "parse invoices receipts",
        "bm25",
        ranking,
        ranker.records,
        lookup=None,
        disabled_lookup=None,
        confidence=judged,
        installed=ranker.n_enabled,
    )
    assert response.best_disabled == "a/one/omega"
    first = response.render().splitlines()[0]
    assert "a/one/omega, is installed but disabled" in first
    assert "`ontoskills enable a/one/omega`" in first and "confidence low" in first
    mcp_first = search_text(response).splitlines()[0]  # the MCP tool's text answer
    assert not mcp_first.startswith("Strong match") and "a/one/omega" in mcp_first
    assert response.to_json()["disabled"][0]["skill"] == "a/one/omega"


def test_through_the_service_and_the_cli(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str], cli_inproc: CliRunner
) -> None:
    """The synthetic home's disabled `hidden-gem` is the best match for its own intent; the
    served list under it is `low` in the JSON, the CLI text and the MCP answer."""
    installed_home(tmp_path_factory, env)
    home = Home.resolve(env["ONTOSKILLS_HOME"])
    svc = SkillService(home, home.default_lockfile, load_config(home.config_file))
    resp = svc.search("speed up slow sql queries for the docs")
    assert resp.results and resp.disabled[0].skill == "other/docs/hidden-gem"
    assert resp.best_disabled == "other/docs/hidden-gem" and resp.confidence == "low"
    doc = json.loads(
        cli_inproc("search", "speed up slow sql queries for the docs", "--json", check=True).stdout
    )
    assert doc["confidence"] == "low"
    assert doc["disabled"][0]["enable"] == "ontoskills enable other/docs/hidden-gem"
    text = cli_inproc("search", "speed up slow sql queries for the docs", check=True).stdout
    assert text.startswith("The best match for") and "other/docs/hidden-gem" in text.splitlines()[0]
