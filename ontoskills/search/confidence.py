"""How sure an answer is: `high`, `low` or `none` (docs/SEARCH.md "Confidence").

Read from two absolute signals of the top result, never from its fused score (which is
normalised per query, so the best result of any query scores the same):
- coverage: the share of the query's idf mass found in the skill's documents (bm25.py);
- best cosine: the query against the skill's best intent vector (semantic and hybrid).
"""

from __future__ import annotations

from .ranking import Ranking

# Calibrated on the dev sets' negative queries against their positives (docs/SEARCH.md).
COSINE_HIGH = 0.31  # semantic/hybrid: best cosine - UNKNOWN_COSINE * unknown
UNKNOWN_COSINE = 0.25
COVERAGE_HIGH = 0.25  # bm25: coverage - unknown


def judge(ranking: Ranking, mode: str, lookup: bool, installed: int) -> str:
    if installed == 0 or not ranking.hits:
        return "none"
    if lookup:
        return "high"  # the query names the skill
    if ranking.best_cosine is not None:
        evidence = ranking.best_cosine - UNKNOWN_COSINE * ranking.unknown
        return "high" if evidence >= COSINE_HIGH else "low"
    # bm25 (no model): words are all the evidence there is
    return "high" if ranking.coverage - ranking.unknown >= COVERAGE_HIGH else "low"
