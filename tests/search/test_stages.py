"""Ranking's stages one at a time (search/ranking.py): score, candidates, a later stage,
explain; and that confidence reads the evidence of the order the last stage left."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ontoskills.catalog.model import CatalogData
from ontoskills.search import confidence
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.ranking import HYBRID_ALPHA, Hit, Ranker, Scores
from ontoskills.search.tokenize import tokenize
from tests.helpers.records import skill_record

E0, E1 = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
# key, description, vector, content hash (copies share one), trust tier, enabled
SKILLS = [
    ("a/one/alpha", "parse invoices from pdf files", E0, "h-alpha", "community", True),
    ("b/two/alpha", "parse invoices from pdf files", E0, "h-alpha", "official", True),
    ("a/one/gamma", "render charts from spreadsheets", E1, "h-gamma", "community", True),
    ("a/one/delta", "translate invoices", (E0 + E1) / np.sqrt(2), "h-delta", "community", True),
    ("a/one/omega", "parse invoices and receipts", E0, "h-omega", "community", False),
]
TRUST = {"official": 1.2, "community": 1.0}


def make_ranker(skills: list[tuple] = SKILLS) -> Ranker:  # type: ignore[type-arg]
    records = [
        skill_record(
            key,
            trust_tier=tier,
            description=text,
            intents=[text],
            content_hash=digest,
            enabled=enabled,
        )
        for key, text, _, digest, tier, enabled in skills
    ]
    data = CatalogData(
        records=records,
        vectors=np.stack([s[2] for s in skills]).astype(np.float32),
        vector_owner=np.arange(len(skills), dtype=np.int32),
        vector_text=[s[1] for s in skills],
        vector_model=None,
        problems=[],
        schema={},
    )
    return Ranker(data, BM25Index, TRUST)


@pytest.fixture
def ranker() -> Ranker:
    return make_ranker()


def key(r: Ranker, i: int) -> str:
    return r.records[i].key


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


# ---------------------------------------------------------------- 1. score
def test_score_bm25_mode_is_bm25_times_trust(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices"), None, "bm25")
    assert s.sims is None and not s.sem.any()
    np.testing.assert_allclose(s.final, s.bm * ranker.trust)
    # the official copy of alpha outscores its community twin by exactly the trust ratio
    assert s.final[1] == pytest.approx(s.final[0] * 1.2)
    assert s.bm[2] == 0  # gamma shares no word


def test_score_semantic_mode_clips_negative_cosines(ranker: Ranker) -> None:
    s = ranker.score(tokenize("anything"), unit(-E0), "semantic")
    assert s.sims is not None
    assert not s.bm.any()  # BM25 does not run in semantic mode
    assert s.sem[0] < 0 and s.final[0] == 0  # negative cosine: no evidence, not a penalty


def test_score_hybrid_fuses_normalised_sides(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices"), unit(E1), "hybrid")
    bm_n = s.bm / s.bm.max()
    sem_n = np.clip(s.sem, 0, None) / np.clip(s.sem, 0, None).max()
    expected = (HYBRID_ALPHA * sem_n + (1 - HYBRID_ALPHA) * bm_n) * ranker.trust
    np.testing.assert_allclose(s.final, expected, rtol=1e-6)


# ---------------------------------------------------------------- 2. candidates
def test_candidates_collapse_copies_and_show_the_most_trusted(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices"), None, "bm25")
    hits, _ = ranker.candidates(s, -1, 10, None)
    shown = [key(ranker, h.index) for h in hits]
    assert shown.count("b/two/alpha") == 1 and "a/one/alpha" not in shown
    alpha = next(h for h in hits if key(ranker, h.index) == "b/two/alpha")
    assert [key(ranker, i) for i in alpha.also_in] == ["a/one/alpha"]


def test_candidates_set_disabled_skills_aside(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices receipts"), None, "bm25")
    hits, disabled = ranker.candidates(s, -1, 10, None)
    assert "a/one/omega" not in [key(ranker, h.index) for h in hits]
    assert [key(ranker, h.index) for h in disabled] == ["a/one/omega"]


def test_candidates_floor_hides_lower_tiers(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices"), None, "bm25")
    official = 2  # manifest.tier_rank("official")
    hits, _ = ranker.candidates(s, official, 10, None)
    assert [key(ranker, h.index) for h in hits] == ["b/two/alpha"]
    assert hits[0].also_in == []  # the community copy is below the floor


def test_candidates_pin_the_looked_up_skill_and_respect_depth(ranker: Ranker) -> None:
    s = ranker.score(tokenize("parse invoices"), None, "bm25")
    hits, _ = ranker.candidates(s, -1, 2, 2)  # gamma named, though it scores 0
    assert [key(ranker, h.index) for h in hits] == ["a/one/gamma", "b/two/alpha"]


# ---------------------------------------------------------------- 3. later stages
@dataclasses.dataclass
class Reverse:
    depth: int
    seen: list[list[int]] = dataclasses.field(default_factory=list)

    def __call__(self, scores: Scores, hits: list[Hit]) -> list[Hit]:
        self.seen.append([h.index for h in hits])
        return hits[::-1]


def test_a_stage_sees_its_depth_and_the_cut_comes_after_it(ranker: Ranker) -> None:
    terms = tokenize("parse invoices translate")
    plain = ranker.rank(terms, None, "bm25", -1, 1, None)
    stage = Reverse(depth=3)
    staged = ranker.rank(terms, None, "bm25", -1, 1, None, stages=[stage])
    assert len(stage.seen[0]) == 2  # alpha and delta: all that scores, up to its depth 3
    assert len(staged.hits) == 1  # top_k applies to the stage's order
    assert staged.hits[0].index != plain.hits[0].index


def test_a_stage_never_moves_a_looked_up_skill(ranker: Ranker) -> None:
    terms = tokenize("parse invoices translate")
    staged = ranker.rank(terms, None, "bm25", -1, 3, 2, stages=[Reverse(depth=3)])
    assert key(ranker, staged.hits[0].index) == "a/one/gamma"


# ---------------------------------------------------------------- 4. explain
def test_explain_reads_the_final_top_hit(ranker: Ranker) -> None:
    """Confidence judges the order the last stage left: the evidence is the new top's."""
    terms = tokenize("parse invoices")
    qvec = unit(E0)
    plain = ranker.rank(terms, qvec, "hybrid", -1, 5, None)
    staged = ranker.rank(terms, qvec, "hybrid", -1, 5, None, stages=[Reverse(depth=5)])
    assert staged.hits[0].index != plain.hits[0].index
    top = staged.hits[0].scored
    assert (staged.coverage, staged.unknown) == ranker.bm25.evidence(terms, top)
    assert staged.best_cosine == pytest.approx(float(ranker.score(terms, qvec, "hybrid").sem[top]))
    assert (plain.bm25_rank, staged.bm25_rank) == (1, 2)  # the new top is BM25's second
    assert confidence.agree(plain) and not confidence.agree(staged)


def test_explain_matches_intents_of_every_hit_and_disabled_match(ranker: Ranker) -> None:
    r = ranker.rank(tokenize("parse invoices receipts"), None, "bm25", -1, 5, None)
    matched = [h.matched for h in r.hits]
    assert matched == [["parse invoices from pdf files"], ["translate invoices"]]
    assert r.disabled and r.disabled[0].matched == ["parse invoices and receipts"]


def test_the_stages_compose_to_rank(ranker: Ranker) -> None:
    terms, qvec = tokenize("parse invoices"), unit(E0 + 0.5 * E1)
    s = ranker.score(terms, qvec, "hybrid")
    hits, disabled = ranker.candidates(s, -1, 5, None)
    by_hand = ranker.explain(s, hits, disabled, -1)
    whole = ranker.rank(terms, qvec, "hybrid", -1, 5, None)
    assert [h.index for h in by_hand.hits] == [h.index for h in whole.hits]
    assert (by_hand.coverage, by_hand.best_cosine, by_hand.semantic_rank) == (
        whole.coverage,
        whole.best_cosine,
        whole.semantic_rank,
    )
