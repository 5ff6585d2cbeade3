"""How sure an answer is: `high`, `low` or `none` (docs/SEARCH.md "Confidence").

Read from absolute evidence about the top result, never from its fused score (normalised
per query, so the best result of any query scores the same):
- best cosine: the query against the skill's best intent or description vector;
- coverage: the share of the query's idf mass the skill contains (bm25.evidence);
- unknown: the share of it no installed skill contains at all.
`none`: nothing installed, or nothing matched. `mode` is unused: the rule follows the
evidence the ranking produced (a cosine exists in semantic and hybrid only).
"""

from __future__ import annotations

from .ranking import Ranking

# Calibrated on the dev sets' negative queries against their positives (docs/SEARCH.md).
COSINE_HIGH = 0.31  # semantic/hybrid: best cosine - UNKNOWN_COSINE * unknown
UNKNOWN_COSINE = 0.25
COVERAGE_HIGH = 0.25  # bm25: coverage - unknown
# semantic/hybrid: words alone make it high when they cover nearly all of the query (bare
# tool names such as "qutip mesolve", which the sentence encoder places poorly).
COVERAGE_ALONE = 0.60


def judge(ranking: Ranking, mode: str, lookup: bool, installed: int) -> str:
    if installed == 0 or not ranking.hits:
        return "none"
    if lookup:
        return "high"  # the query names the skill
    words = ranking.coverage - ranking.unknown
    if ranking.best_cosine is not None:
        meaning = ranking.best_cosine - UNKNOWN_COSINE * ranking.unknown
        return "high" if meaning >= COSINE_HIGH or words >= COVERAGE_ALONE else "low"
    # bm25 (no model): words are all the evidence there is
    return "high" if words >= COVERAGE_HIGH else "low"
