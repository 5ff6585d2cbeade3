"""How sure an answer is: `high`, `low` or `none` (docs/SEARCH.md "Confidence").

Read from absolute evidence about the top result, never from its fused score (normalised
per query, so the best result of any query scores the same):
- best cosine: the query against the skill's best intent or description vector;
- coverage: the share of the query's idf mass the skill contains (bm25.evidence);
- unknown: the share of it no installed skill contains at all;
- agreement: both rankers put the skill on top (BM25 first, semantic in its top 2), two
  independent pieces of evidence (words, meaning) pointing at the same skill.
The served list is judged: when a disabled skill outscores every served hit, the answer is
`low` (the best match is switched off; the answer says so and how to turn it on).
`none`: nothing installed, or nothing matched. `mode` is unused: the rule follows the
evidence the ranking produced (a cosine exists in semantic and hybrid only, agreement in
hybrid only).
"""

from __future__ import annotations

from .ranking import Ranking

# Fitted on the full dev set (negatives against positives) with 5-fold cross-validation;
# out-of-fold figures match in-sample (docs/SEARCH.md, `benchmarks/confidence_cv.py`).
COSINE_HIGH = 0.31  # semantic/hybrid: best cosine - UNKNOWN_COSINE * unknown
# ... and with views (issue 26): the top hit's meaning (the mean of its best intent's and its
# two views' cosines, semantic.py) - UNKNOWN_COSINE * unknown. Fitted the same way on the
# views' ranking; it flags more of the extra negatives with more positives `high` than the
# best cosine did (docs/SEARCH.md "Confidence").
MEANING_HIGH = 0.28
UNKNOWN_COSINE = 0.25
# ... lowered by this much when BM25 ranks the skill first and the semantic ranker ranks it
# in its top AGREE_SEMANTIC_RANK (copies counted once): words and meaning agree.
AGREEMENT = 0.04
AGREE_SEMANTIC_RANK = 2
COVERAGE_HIGH = 0.25  # bm25: coverage - unknown
# semantic/hybrid: words alone make it high when they cover nearly all of the query (bare
# tool names such as "qutip mesolve", which the sentence encoder places poorly).
COVERAGE_ALONE = 0.60


def agree(ranking: Ranking) -> bool:
    """Both rankers ran and put the top hit first (BM25) and near the top (semantic)."""
    return (
        ranking.bm25_rank == 1
        and ranking.semantic_rank is not None
        and ranking.semantic_rank <= AGREE_SEMANTIC_RANK
    )


def meaning(ranking: Ranking) -> float | None:
    """Semantic evidence net of the unknown-term penalty: the top hit's meaning when the
    catalog has views, else its best cosine (None: no semantic side)."""
    best = ranking.best_meaning if ranking.best_meaning is not None else ranking.best_cosine
    if best is None:
        return None
    return best - UNKNOWN_COSINE * ranking.unknown


def threshold(ranking: Ranking) -> float:
    """The `high` bar for meaning(ranking), lowered when words and meaning agree."""
    base = MEANING_HIGH if ranking.best_meaning is not None else COSINE_HIGH
    return base - (AGREEMENT if agree(ranking) else 0.0)


def judge(ranking: Ranking, mode: str, lookup: bool, installed: int) -> str:
    if installed == 0 or not ranking.hits:
        return "none"
    if lookup:
        return "high"  # the query names the skill
    if ranking.disabled_best:  # the best match is switched off: the served list is second
        return "low"  # best, whatever its own evidence says (the answer names the skill)
    if ranking.wordless:  # only punctuation or symbols: the encoder still puts "@@@" near
        return "low"  # some skill (cosine 0.35 on the full registry), an answer to nothing
    words = ranking.coverage - ranking.unknown
    sense = meaning(ranking)
    if sense is not None:
        return "high" if sense >= threshold(ranking) or words >= COVERAGE_ALONE else "low"
    # bm25 (no model): words are all the evidence there is
    return "high" if words >= COVERAGE_HIGH else "low"
