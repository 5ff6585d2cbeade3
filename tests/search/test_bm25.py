from __future__ import annotations

import numpy as np

from ontoskills.search.bm25 import BM25Index
from ontoskills.search.lookup import _edits_within, norm
from ontoskills.search.tokenize import tokenize

DOCS = [
    tokenize("debug failing tests find the root cause of flaky tests"),
    tokenize("write an implementation plan from a spec"),
    tokenize("create pdf documents and merge pdf files"),
]


def test_bm25_ranks_matching_document_first() -> None:
    index = BM25Index(DOCS)
    for query, best in (("flaky tests", 0), ("implementation plan", 1), ("merge pdf", 2)):
        scores = index.scores(tokenize(query))
        assert int(np.argmax(scores)) == best
        assert scores[best] > 0


def test_unknown_terms_score_zero_and_typos_match_one_edit_away() -> None:
    index = BM25Index(DOCS)
    assert not index.scores(tokenize("zebra")).any()
    typo = index.scores(tokenize("flakey tsts"))
    exact = index.scores(tokenize("flaky tests"))
    assert int(np.argmax(typo)) == 0
    assert 0 < typo[0] < exact[0]  # corrected terms count less than exact ones


def test_empty_corpus() -> None:
    assert BM25Index([]).scores(["x"]).shape == (0,)
    assert not BM25Index([[], []]).scores(["x"]).any()


def test_name_normal_form_and_edit_distance() -> None:
    assert norm("systematicDebugging") == norm("systematic_debugging") == "systematic-debugging"
    assert _edits_within("brainstorming", "brainstroming", 1)  # transposition
    assert not _edits_within("planning", "pruning", 1)


def test_postings_round_trip_through_arrays() -> None:
    index = BM25Index(DOCS)
    terms, arrays = index.to_arrays()
    again = BM25Index.from_arrays(terms, arrays)
    for query in ("flaky tests", "merge pdf", "flakey", "zebra"):
        assert np.array_equal(index.scores(tokenize(query)), again.scores(tokenize(query)))
    arrays["ids"] = arrays["ids"][:-1]
    try:
        BM25Index.from_arrays(terms, arrays)
    except ValueError:
        pass
    else:
        raise AssertionError("truncated arrays were accepted")


def test_partial_sort_walks_in_the_same_order_as_a_full_stable_sort() -> None:
    from ontoskills.search.ranking import _descending

    rng = np.random.default_rng(0)
    for _ in range(500):
        score = rng.integers(0, 5, size=int(rng.integers(0, 60))).astype(np.float32)
        idx = np.flatnonzero(score > 0)  # many ties, as copies of one skill have
        want = idx[np.argsort(-score[idx], kind="stable")].tolist()
        assert list(_descending(score, idx, int(rng.integers(1, 20)))) == want
