"""SkillService.search over real installs: modes, lookup, trust, argument errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.errors import UsageError
from ontoskills.search.service import MAX_TOP_K
from tests.conftest import CliRunner
from tests.helpers.registry import unit_vector
from tests.helpers.skills import install_synthetic, installed_home, place_model, service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


def test_bm25_ranking_and_matched_intents(installed: Path, env: dict[str, str]) -> None:
    svc = service(env)
    resp = svc.search("my tests are failing, find the root cause", top_k=3)
    assert resp.mode == "bm25"  # auto without a model
    assert resp.lookup is None
    top = resp.results[0]
    assert top.skill == "acme/devtools/debugging"
    assert top.trust_tier == "official"
    assert top.description == "Find the root cause of failing tests"
    assert top.matched_intents[0] in ("debug failing tests", "find root cause of a bug")
    assert [r.score for r in resp.results] == sorted((r.score for r in resp.results), reverse=True)
    assert len(resp.results) <= 3


def test_lookup_puts_named_skill_first(installed: Path, env: dict[str, str]) -> None:
    resp = service(env).search("acme/devtools/planning", top_k=2)
    assert resp.lookup == "acme/devtools/planning"
    assert resp.results[0].skill == "acme/devtools/planning"
    assert len(resp.results) <= 2


def test_trust_weight_orders_identical_skills(installed: Path, env: dict[str, str]) -> None:
    svc = service(env)
    results = svc.search("create and edit PDF documents", top_k=5).results
    pdfs = [r for r in results if r.skill.endswith("/pdf")]
    assert [r.skill for r in pdfs] == ["acme/devtools/pdf", "other/docs/pdf"]
    assert pdfs[0].score == pytest.approx(pdfs[1].score * 1.2 / 0.8, rel=1e-4)
    assert (
        svc.search("create and edit PDF documents", min_trust="verified").results[0].skill
        == "acme/devtools/pdf"
    )
    assert all(
        r.trust_tier == "official"
        for r in svc.search("pdf documents", min_trust="official", top_k=10).results
    )


def test_configured_trust_weights(installed: Path, env: dict[str, str]) -> None:
    Path(env["ONTOSKILLS_HOME"], "config.toml").write_text(
        "[search]\ntrust_weights = { community = 5.0 }\n"
    )
    results = service(env).search("create and edit PDF documents").results
    assert results[0].skill == "other/docs/pdf"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"q": "   "}, "empty"),
        ({"q": "x", "top_k": 0}, "top_k"),
        ({"q": "x", "top_k": MAX_TOP_K + 1}, "top_k"),
        ({"q": "x", "top_k": True}, "top_k"),
        ({"q": "x", "mode": "fuzzy"}, "mode"),
        ({"q": "x", "min_trust": "gold"}, "trust"),
        ({"q": "x", "mode": "semantic"}, "model"),  # no model installed
    ],
)
def test_bad_arguments_raise_usage_error(
    installed: Path, env: dict[str, str], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        service(env).search(**kwargs)  # type: ignore[arg-type]


def test_huge_and_odd_queries(installed: Path, env: dict[str, str]) -> None:
    svc = service(env)
    assert svc.search("plan " * 2000, top_k=1).results[0].skill == "acme/devtools/planning"
    assert svc.search("!!! ???").results == []
    assert svc.search("zzzz qqqq").results == []


def test_semantic_and_hybrid_with_the_real_model(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    place_model(env)
    install_synthetic(cli, tmp_path)  # no vectors installed: every one is derived by search
    svc = service(env)
    data = svc.state.data
    assert data.derived_vectors == data.vectors.shape[0] > 0  # every vector derived by us
    assert data.vectors.shape[1] == 384
    resp = svc.search("pull the most important frames out of a clip")
    assert resp.mode == "hybrid"
    assert resp.results[0].skill == "acme/devtools/video-frames"
    sem = svc.search("my unit tests are broken", mode="semantic")
    assert sem.results[0].skill == "acme/devtools/debugging"
    assert sem.results[0].matched_intents[0] == "debug failing tests"
    assert 0 < sem.results[0].score <= 1.2  # cosine times the official weight


def test_stored_vectors_of_another_dimension_turn_semantic_off(
    installed: Path, env: dict[str, str]
) -> None:
    # Install refuses such a mix; a local skill can still bring one: 8-dim vectors next to
    # the 384-dim model. They claim to be the encoder's own model (vectors of another model
    # are not mixed in at all: the encoder derives its own, issue 26, see below).
    folder = Path(env["ONTOSKILLS_HOME"]) / "ontologies/mine/odd"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(
        "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
        'oc:skill_odd a oc:Skill ; dcterms:identifier "odd" ; oc:resolvesIntent "odd thing" .\n'
    )
    vec = unit_vector("odd thing", 8)
    (folder / "intents.json").write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "dimension": 8,
                "intents": [{"intent": "odd thing", "embedding": vec, "skills": ["odd"]}],
            }
        )
    )
    place_model(env)
    svc = service(env)
    assert svc.search("debug failing tests").mode == "bm25"
    assert any("semantic search is off" in p for p in svc.problems)
    with pytest.raises(UsageError, match="hybrid"):
        svc.search("debug failing tests", mode="hybrid")
    # The same file naming another model: its vectors are another space, so they are left
    # out and the installed encoder derives this skill's own; semantic search stays on.
    data = json.loads((folder / "intents.json").read_text())
    (folder / "intents.json").write_text(json.dumps({**data, "model": "m"}))
    other = service(env)
    assert other.search("debug failing tests").mode == "hybrid"
    assert not any("semantic search is off" in p for p in other.problems)
    assert "local/mine/odd" in [r.skill for r in other.search("odd thing", mode="semantic").results]


def test_concurrent_search_and_refresh(installed: Path, env: dict[str, str]) -> None:
    """The server refreshes and searches from different threads; reloads swap state whole."""
    import threading

    svc = service(env)
    folder = Path(env["ONTOSKILLS_HOME"]) / "ontologies/mine/flip"
    folder.mkdir(parents=True)
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        try:
            while not stop.is_set():
                results = svc.search("find root cause of failing tests").results
                assert results[0].skill == "acme/devtools/debugging"
                svc.context(results[0].skill)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    reloads = 0
    for n in range(8):  # a local skill changes (size too, so coarse mtimes cannot hide it)
        (folder / "ontoskill.ttl").write_text(
            "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
            "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
            'oc:skill_flip a oc:Skill ; dcterms:identifier "flip" ;\n'
            f'  oc:hasDescription "v{n}{"!" * n}" .\n'
        )
        reloads += svc.refresh()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert reloads >= 1
    assert svc.context("local/mine/flip").record.description == "v7!!!!!!!"


def test_model_installed_while_serving_switches_auto_to_hybrid(
    installed: Path, env: dict[str, str]
) -> None:
    svc = service(env)
    assert svc.search("debug failing tests").mode == "bm25"
    place_model(env)  # e.g. `install --with-embeddings` in another terminal
    assert svc.refresh() is True
    resp = svc.search("my unit tests are broken")
    assert resp.mode == "hybrid"
    assert resp.results[0].skill == "acme/devtools/debugging"
