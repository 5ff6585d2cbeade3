"""Quality smoke on the real OntoStore subset and dev queries (skipped without ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner, shared_path
from tests.helpers.skills import install_ontostore, service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


pytestmark = pytest.mark.shared


def recall_at(svc: object, queries: list[dict[str, object]], mode: str, k: int) -> float:
    hits = 0
    for q in queries:
        keys = [r.skill for r in svc.search(q["q"], top_k=k, mode=mode).results]  # type: ignore[attr-defined]
        hits += any(e in keys for e in q["expect"])  # type: ignore[attr-defined]
    return hits / len(queries)


def test_dev_queries_every_mode(cli: CliRunner, env: dict[str, str], tmp_path: Path) -> None:
    queries = install_ontostore(cli)
    svc = service(env)
    assert len(svc.skills()) == 51
    assert svc.problems == []
    assert recall_at(svc, queries, "bm25", 5) >= 0.9
    assert recall_at(svc, queries, "semantic", 5) >= 0.9
    assert recall_at(svc, queries, "hybrid", 5) >= 0.95
    # Three names of one skill (quirk 5) and sub-modules without vectors (quirk 6).
    assert svc.resolve("ffmpeg-keyframe-extraction") == "skillsbench/mario-coin-counting/ffmpeg"
    assert svc.resolve("image-editing") == "skillsbench/mario-coin-counting/image_editing"
    # Quirk 6: vectors for modules without stored ones come from the install's derived file
    # (state/derived/vectors/); search itself encoded only one description per skill.
    assert svc.state.data.derived_vectors > 0
    cache = Path(env["ONTOSKILLS_HOME"]) / "state/derived/vector-cache"
    (texts,) = [json.loads(p.read_text()) for p in cache.glob("*.json")]
    records = svc.state.data.records
    # ... and each skill's two views (issue 26, catalog/model.SkillRecord.view_texts)
    views = {t for r in records for t in r.view_texts}
    assert sorted(texts) == sorted({r.summary_text for r in records} | views)
    hits = svc.search("show mockups in a browser while brainstorming", mode="semantic")
    assert hits.results[0].skill == "obra/superpowers/brainstorming"  # visual-companion.ttl
    # Confidence: the full-registry dev set's negatives (nothing installed fits them) are
    # flagged in both modes; the subset's positives are mostly answered `high` and right.
    negatives = [
        json.loads(line)["q"]
        for line in shared_path("queries-full-dev.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line)["kind"] == "negative"
    ]
    for mode in ("hybrid", "bm25"):
        flagged = [svc.search(q, mode=mode).confidence != "high" for q in negatives]
        assert sum(flagged) >= 9, (mode, flagged)
    high = 0
    for q in queries:
        resp = svc.search(q["q"], mode="hybrid")
        keys = {k for r in resp.results for k in (r.skill, *r.also_in)}
        high += resp.confidence == "high" and bool(keys & set(q["expect"]))
    assert high / len(queries) >= 0.9


def test_full_context_of_a_real_skill(cli: CliRunner, env: dict[str, str]) -> None:
    install_ontostore(cli, ["obra/superpowers"], model=False)
    ctx = service(env).context("obra/superpowers/systematic-debugging").to_json()
    assert ctx["knowledge"] and ctx["knowledge"][0]["severity"] == "CRITICAL"
    wf = next(w for w in ctx["workflows"] if w["id"] == "systematic-debugging-four-phases")
    ids = [s["id"] for s in wf["steps"]]
    assert ids.index("phase1-investigate") < ids.index("phase4-5-architecture")
    for step in wf["steps"]:  # dependencies come before the steps that need them
        assert all(ids.index(d) < ids.index(step["id"]) for d in step["depends_on"] if d in ids)
    orders = [s["order"] for s in ctx["sections"]]
    assert orders == sorted(orders)
    assert ctx["code_examples"]
    brainstorm = service(env).context("obra/superpowers/brainstorming").to_json()
    assert any(p.endswith("scripts/start-server.sh") for p in brainstorm["scripts"])
    assert "writing-plans" in brainstorm["dependencies"]
