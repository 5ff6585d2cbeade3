"""The confidence rule, one evidence term at a time (search/confidence.py), and the ranker
evidence it reads (where BM25 and the semantic ranker each put the top hit)."""

from __future__ import annotations

import numpy as np
import pytest

from ontoskills.catalog.model import CatalogData
from ontoskills.search import confidence as c
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.ranking import Hit, Ranker, Ranking
from ontoskills.search.tokenize import tokenize
from tests.helpers.records import skill_record


def ranking(**evidence: object) -> Ranking:
    return Ranking([Hit(0, 1.0, scored=0)], [], **evidence)  # type: ignore[arg-type]


def judge(r: Ranking, *, lookup: bool = False, installed: int = 5) -> str:
    return c.judge(r, "hybrid", lookup, installed)


def test_none_when_nothing_is_installed_or_matched() -> None:
    assert judge(ranking(best_cosine=0.9, coverage=1.0), installed=0) == "none"
    assert judge(Ranking([], [])) == "none"


def test_a_lookup_is_high_whatever_the_evidence() -> None:
    assert judge(ranking(best_cosine=0.0, coverage=0.0, unknown=1.0), lookup=True) == "high"


def test_cosine_term() -> None:
    assert judge(ranking(best_cosine=c.COSINE_HIGH)) == "high"
    assert judge(ranking(best_cosine=c.COSINE_HIGH - 0.01)) == "low"


def test_with_views_the_top_hits_meaning_is_the_evidence() -> None:
    # Issue 26: a near miss often has one intent close to the query (a high best cosine)
    # while the skill read whole is not; a catalog with views judges the mean of the three.
    near_miss = ranking(best_cosine=c.COSINE_HIGH + 0.1, best_meaning=c.MEANING_HIGH - 0.01)
    assert judge(near_miss) == "low"
    right = ranking(best_cosine=c.COSINE_HIGH - 0.05, best_meaning=c.MEANING_HIGH)
    assert judge(right) == "high"
    # the unknown-term penalty and agreement act on it as on the cosine
    assert judge(ranking(best_meaning=c.MEANING_HIGH + 0.05, unknown=0.4)) == "low"
    agreeing = ranking(best_meaning=c.MEANING_HIGH - 0.01, bm25_rank=1, semantic_rank=1)
    assert judge(agreeing) == "high"
    assert c.meaning(ranking(best_meaning=0.5, best_cosine=0.9)) == pytest.approx(0.5)


def test_unknown_term_lowers_the_cosine_evidence() -> None:
    # 0.4 of the query's idf mass is words no installed skill has ("buttermilk").
    cos = c.COSINE_HIGH + 0.05
    assert judge(ranking(best_cosine=cos)) == "high"
    assert judge(ranking(best_cosine=cos, unknown=0.4)) == "low"  # 0.05 < 0.25 * 0.4
    assert judge(ranking(best_cosine=cos + c.UNKNOWN_COSINE * 0.4, unknown=0.4)) == "high"


def test_coverage_alone_term() -> None:
    # Bare tool names the encoder places poorly: nearly all of the words is enough...
    assert judge(ranking(best_cosine=0.1, coverage=c.COVERAGE_ALONE)) == "high"
    # ... net of the words nobody has.
    assert judge(ranking(best_cosine=0.1, coverage=c.COVERAGE_ALONE, unknown=0.05)) == "low"


@pytest.mark.parametrize(
    ("bm25_rank", "semantic_rank", "expected"),
    [
        (1, 1, "high"),
        (1, c.AGREE_SEMANTIC_RANK, "high"),
        (1, c.AGREE_SEMANTIC_RANK + 1, "low"),  # the meaning ranker prefers others
        (2, 1, "low"),  # the word ranker prefers another skill
        (None, 1, "low"),  # BM25 gives it nothing (or did not run)
        (1, None, "low"),
    ],
)
def test_agreement_term(bm25_rank: int | None, semantic_rank: int | None, expected: str) -> None:
    cos = c.COSINE_HIGH - c.AGREEMENT / 2  # below the threshold, above the lowered one
    r = ranking(best_cosine=cos, bm25_rank=bm25_rank, semantic_rank=semantic_rank)
    assert c.agree(r) is (expected == "high")
    assert judge(r) == expected
    # Agreement lowers the bar; it does not replace the evidence.
    weak = ranking(best_cosine=cos - c.AGREEMENT, bm25_rank=1, semantic_rank=1)
    assert judge(weak) == "low"


def test_bm25_mode_reads_words_only() -> None:
    # No cosine (no model): agreement and cosine cannot apply.
    assert c.judge(ranking(coverage=c.COVERAGE_HIGH), "bm25", False, 5) == "high"
    assert c.judge(ranking(coverage=0.5, unknown=0.3), "bm25", False, 5) == "low"
    assert c.meaning(ranking(coverage=1.0)) is None


# ---------------------------------------------------------------- ranker evidence

E0, E1 = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
SKILLS = [  # key, description, vector, content hash (copies share one)
    ("a/one/alpha", "parse invoices from pdf files", E0, "h-alpha"),
    ("b/two/alpha", "parse invoices from pdf files", E0, "h-alpha"),
    ("a/one/gamma", "render charts from spreadsheets", E1, "h-gamma"),
    ("a/one/delta", "translate invoices", (E0 + E1) / np.sqrt(2), "h-delta"),
    ("b/two/delta", "translate invoices", (E0 + E1) / np.sqrt(2), "h-delta"),
]


@pytest.fixture
def ranker() -> Ranker:
    records = [
        skill_record(key, description=text, content_hash=digest) for key, text, _, digest in SKILLS
    ]
    data = CatalogData(
        records=records,
        vectors=np.stack([v for _, _, v, _ in SKILLS]).astype(np.float32),
        vector_owner=np.arange(len(SKILLS), dtype=np.int32),
        vector_text=[text for _, text, _, _ in SKILLS],
        vector_model=None,
        problems=[],
        schema={},
    )
    return Ranker(data, BM25Index, {})


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_ranks_of_the_top_hit_under_each_ranker(ranker: Ranker) -> None:
    # Words: alpha (both query words) over delta (one); meaning: delta (0.97) over alpha
    # (0.86) over gamma. Fused, alpha wins; delta's copy must not count as a second skill.
    qvec = unit(E0 + 0.6 * E1)
    r = ranker.rank(tokenize("parse invoices"), qvec, "hybrid", -1, 5, None)
    assert ranker.records[r.hits[0].index].skill_id == "alpha"
    assert (r.bm25_rank, r.semantic_rank) == (1, 2)
    assert c.agree(r)
    # Meaning near gamma (0.98), then delta (0.83), far from alpha (0.20): alpha still wins
    # the fusion on words, but the meaning ranker puts it third (two groups above it, one of
    # them with two copies): no agreement.
    r = ranker.rank(tokenize("parse invoices"), unit(0.2 * E0 + E1), "hybrid", -1, 5, None)
    assert ranker.records[r.hits[0].index].skill_id == "alpha"
    assert (r.bm25_rank, r.semantic_rank) == (1, 3)
    assert not c.agree(r)


def test_no_word_match_is_no_agreement(ranker: Ranker) -> None:
    # Nothing shares a word with the query: every BM25 score is 0, which is no ranking.
    r = ranker.rank(tokenize("zebra"), E1, "hybrid", -1, 5, None)
    assert ranker.records[r.hits[0].index].skill_id == "gamma"
    assert (r.bm25_rank, r.semantic_rank) == (None, 1)
    assert not c.agree(r)


def test_ranks_only_in_hybrid(ranker: Ranker) -> None:
    for mode, qvec in (("bm25", None), ("semantic", unit(E0 + 0.6 * E1))):
        r = ranker.rank(tokenize("parse invoices"), qvec, mode, -1, 5, None)
        assert r.hits and (r.bm25_rank, r.semantic_rank) == (None, None), mode


def test_a_query_without_words_is_never_high() -> None:
    # "@@@" has no search terms, yet the encoder puts it at cosine 0.35 from some skill of
    # the full registry: over the threshold, an answer to nothing (benchmarks/heldout-full).
    assert judge(ranking(best_cosine=0.9, coverage=1.0)) == "high"
    assert judge(ranking(best_cosine=0.9, coverage=1.0, wordless=True)) == "low"
    assert judge(ranking(best_cosine=0.9, wordless=True), lookup=True) == "high"


def test_the_ranker_marks_a_wordless_query(ranker: Ranker) -> None:
    qvec = unit(E0)  # close to alpha in meaning: without the mark, cosine alone says high
    wordless = ranker.rank(tokenize("!!! ???"), qvec, "hybrid", -1, 5, None)
    assert wordless.hits and wordless.wordless and wordless.best_cosine > c.COSINE_HIGH
    assert c.judge(wordless, "hybrid", False, 5) == "low"
    worded = ranker.rank(tokenize("parse"), qvec, "hybrid", -1, 5, None)
    assert not worded.wordless and c.judge(worded, "hybrid", False, 5) == "high"
