"""The `ontoskill` search answer as a model reads it: small, confidence first.

The text says in plain words what kind of answer this is (a strong match, only weak ones,
nothing, nothing installed, a disabled skill) and lists the results compactly; the
structured content carries identifiers, scores, confidence, copies and disabled matches,
not a second copy of the text. For top_k 5 the two stay under 2,400 characters together
(descriptions are shortened, then dropped, until they fit; tests/server/test_answers.py).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from ..search.answer import SearchResponse, enable_command
from ..words import plural

BUDGET = 2_400  # characters of text + compact JSON for the whole answer
# Tried in order until the answer fits the budget: (description, matched intent, copies
# named per result). Descriptions go first: the skill id is what the next call needs.
LEVELS = ((150, 80, 3), (110, 70, 3), (80, 60, 2), (50, 50, 1), (0, 0, 1), (0, 0, 0))
MAX_QUERY_ECHO = 100
NEXT_STEP = "Call ontoskill again with one of these skill ids to get its context."


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def search_text(response: SearchResponse, level: tuple[int, int, int] = LEVELS[0]) -> str:
    describe, intent, copies = level
    query = '"' + _cut(response.query, MAX_QUERY_ECHO) + '"'
    lines = [response.headline(query)]
    if response.confidence == "high" and response.results:
        lines[0] = f"Strong match for {query}:"
    for n, r in enumerate(response.results, 1):
        head = f"{n}. {r.skill} [{r.trust_tier}, {r.score:.2f}]"
        if r.description and describe:
            head += f": {_cut(r.description, describe)}"
        lines.append(head)
        if r.matched_intents and intent:
            lines.append(f"   matched: {_cut(r.matched_intents[0], intent)}")
        if r.also_in:
            shown, more = r.also_in[:copies], len(r.also_in) - copies
            named = ", ".join(shown) + (f" (+{more} more)" if shown and more > 0 else "")
            lines.append(f"   same skill also in: {named or plural(more, 'package')}")
    if response.disabled and response.disabled_lookup is None and response.results:
        lines.append("Installed but disabled (not served until enabled):")
    for d in response.disabled:
        if d.skill == response.disabled_lookup:
            continue  # the headline already says it
        lines.append(f"- {d.skill}: `{enable_command([d.skill])}`")
    if response.results:
        lines.append(NEXT_STEP)
    return "\n".join(lines)


def search_structured(response: SearchResponse, copies: int = LEVELS[0][2]) -> dict[str, Any]:
    results = []
    for r in response.results:
        item: dict[str, Any] = {
            "skill": r.skill,
            "score": round(r.score, 3),
            "trust_tier": r.trust_tier,
            "also_in": r.also_in[:copies],
        }
        if len(r.also_in) > copies:
            item["more_copies"] = len(r.also_in) - copies
        results.append(item)
    return {
        "kind": "search",
        "query": _cut(response.query, MAX_QUERY_ECHO),
        "mode": response.mode,
        "confidence": response.confidence,
        "results": results,
        "disabled": [{"skill": d.skill, "enable": d.enable} for d in response.disabled],
        "installed_skills": response.installed,
    }


def answer_size(text: str, structured: dict[str, Any]) -> int:
    return len(text) + len(json.dumps(structured, separators=(",", ":"), ensure_ascii=False))


def search_result(response: SearchResponse) -> types.CallToolResult:
    for level in LEVELS:
        text, structured = search_text(response, level), search_structured(response, level[2])
        if answer_size(text, structured) <= BUDGET:
            break
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
    )
