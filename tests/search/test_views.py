"""Each skill read whole (issue 26): two view vectors per skill beside its intents, built
with the query's encoder, cached per model, kept in the snapshot, and part of the meaning
score that semantic and hybrid search rank by (docs/SEARCH.md "Views")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ontoskills.catalog.model import VIEW_CHARS, CatalogData, SkillRecord, empty_views
from ontoskills.catalog.snapshot import load_snapshot, save_snapshot
from ontoskills.paths import Home
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.ranking import BM25_FULL_COVERAGE, HYBRID_ALPHA, Ranker
from ontoskills.search.tokenize import tokenize
from tests.helpers.records import skill_record
from tests.helpers.skills import installed_home, service
from tests.helpers.tinymodel import build_tiny_model


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, np.float32)
    return v / np.linalg.norm(v)


def record(key: str, intents: list[str]) -> SkillRecord:
    return skill_record(key, description=f"{key} description", intents=intents)


def data(views: np.ndarray) -> CatalogData:
    # "a": its one intent is off the query (cosine 0.3) but the skill read whole is on it;
    # "b": its intent is nearer (0.5) but the skill as a whole is about something else.
    return CatalogData(
        records=[record("x/p/a", ["tidy a table"]), record("x/p/b", ["parse a log"])],
        vectors=np.stack([unit(0.3, np.sqrt(1 - 0.09), 0), unit(0.5, 0, np.sqrt(0.75))]),
        vector_owner=np.array([0, 1], np.int32),
        vector_text=["tidy a table", "parse a log"],
        vector_model=None,
        problems=[],
        schema={},
        views=views,
    )


QUERY = unit(1, 0, 0)
VIEWS = np.stack(
    [
        np.stack([unit(0.9, np.sqrt(1 - 0.81), 0)] * 2),  # a: cosine 0.9 twice
        np.stack([unit(0.1, 0, np.sqrt(0.99))] * 2),  # b: cosine 0.1 twice
    ]
).astype(np.float32)


def test_the_skill_read_whole_decides_when_no_single_intent_does() -> None:
    without = Ranker(data(empty_views()), BM25Index, {})
    with_views = Ranker(data(VIEWS), BM25Index, {})
    assert np.argmax(without.score([], QUERY, "semantic").final) == 1  # b: best intent
    scores = with_views.score([], QUERY, "semantic")
    assert np.argmax(scores.final) == 0  # a: the mean of its intent and its views
    assert np.allclose(scores.final, [(0.3 + 0.9 + 0.9) / 3, (0.5 + 0.1 + 0.1) / 3], atol=1e-5)
    # Scores.sem stays the best single intent's cosine: confidence reads it as a cosine.
    assert np.allclose(scores.sem, [0.3, 0.5], atol=1e-5)


def test_with_views_a_bm25_winner_explaining_little_of_the_query_counts_less() -> None:
    terms = tokenize("parse quarterly revenue forecasts")  # b's words: only "parse"
    bm = np.array([0.0, 2.0], np.float32)
    sem = np.array([1.0, 0.5], np.float32)
    old = Ranker(data(empty_views()), BM25Index, {})
    new = Ranker(data(VIEWS), BM25Index, {})
    coverage, _ = new.bm25.evidence(terms, 1)
    assert 0 < coverage < 0.25  # one known word of four
    scale = min(1.0, coverage / BM25_FULL_COVERAGE)
    assert np.allclose(new.fuse(bm, sem, terms), [HYBRID_ALPHA, HYBRID_ALPHA * 0.5 + 0.5 * scale])
    assert np.argmax(new.fuse(bm, sem, terms)) == 0  # meaning decides
    # No views (no encoder at build time), or no terms given: the plain even fusion.
    even = [HYBRID_ALPHA, HYBRID_ALPHA * 0.5 + (1 - HYBRID_ALPHA)]
    assert np.allclose(old.fuse(bm, sem, terms), even) and np.argmax(even) == 1
    assert np.allclose(new.fuse(bm, sem), even)
    # A winner that explains the query keeps its full weight.
    full = tokenize("parse a log")
    assert new.bm25.evidence(full, 1)[0] >= BM25_FULL_COVERAGE
    assert np.allclose(new.fuse(bm, sem, full), even)


def test_view_texts_join_the_intents_and_say_what_the_skill_is() -> None:
    r = record("x/p/csv-tidy", [f"intent {i}" for i in range(20)])
    bag, about = r.view_texts
    assert bag == ". ".join(f"intent {i}" for i in range(12))
    assert about.startswith("csv tidy: x/p/csv-tidy description intent 0. ")
    assert about.endswith("intent 5")
    huge = record("x/p/h", ["word " * 5000])
    assert all(len(t) <= VIEW_CHARS for t in huge.view_texts)
    bare = record("x/p/bare", [])
    assert bare.view_texts[0] == "x/p/bare description"  # no intents: the description


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Home:
    installed_home(tmp_path_factory, env)
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    build_tiny_model(home.embeddings_dir)
    return home


def test_views_are_encoded_by_the_encoder_once_and_kept_in_the_snapshot(
    home: Home, env: dict[str, str]
) -> None:
    svc = service(env)
    got = svc.state.data
    n = len(got.records)
    assert n > 0 and got.views.shape == (n, 2, 8)
    assert np.allclose(np.linalg.norm(got.views, axis=2), 1.0, atol=1e-5)
    encoder = svc.catalog.encoder()
    assert encoder is not None
    for i, r in enumerate(got.records):
        want = np.asarray(encoder.encode(list(r.view_texts)), np.float32)
        want /= np.linalg.norm(want, axis=1, keepdims=True)
        assert np.allclose(got.views[i], want, atol=1e-5), r.key
    # Through the per-model vector cache: a rebuild encodes none of them again.
    (texts,) = [
        json.loads(p.read_text()) for p in (home.derived_dir / "vector-cache").glob("*.json")
    ]
    assert {t for r in got.records for t in r.view_texts} <= set(texts)
    # The saved snapshot gives them back (a new service reads it, not the tree).
    again = service(env)
    assert again.catalog.view.rebuilt is False
    assert np.array_equal(np.asarray(again.state.data.views), got.views)


def test_without_an_encoder_there_are_no_views(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]
) -> None:
    installed_home(tmp_path_factory, env)
    got = service(env).state.data
    assert got.views.shape[0] == 0


def test_a_snapshot_whose_views_do_not_fit_its_records_is_rebuilt(tmp_path: Path) -> None:
    tree = tmp_path / "ontologies"
    good = data(VIEWS)
    good.records[0].root = good.records[1].root = str(tree / "x")
    save_snapshot(tmp_path / "d", "k" * 32, good)
    back = load_snapshot(tmp_path / "d", "k" * 32, tree=tree)
    assert back is not None and np.array_equal(back.views, VIEWS)
    bad = data(VIEWS[:1])  # one pair for two records
    bad.records[0].root = bad.records[1].root = str(tree / "x")
    save_snapshot(tmp_path / "e", "k" * 32, bad)
    assert load_snapshot(tmp_path / "e", "k" * 32, tree=tree) is None
