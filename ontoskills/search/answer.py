"""What a search returns: results, copies collapsed into `also_in`, disabled matches, and a
confidence an agent can act on; rendered for people (`ontoskills search`) and as JSON.

The MCP tool's compact text lives in server/answers.py; both read these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog.model import SkillRecord
    from .ranking import Ranking

CONFIDENCES = ("high", "low", "none")
INSTALL_HINT = "ontoskills install author/pkg"


def enable_command(keys: list[str]) -> str:
    return "ontoskills enable " + " ".join(keys)


@dataclass(frozen=True)
class SearchResult:
    skill: str
    score: float
    trust_tier: str
    description: str
    matched_intents: list[str]
    also_in: list[str] = field(default_factory=list)  # copies (same oc:contentHash)

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "score": round(self.score, 4),
            "trust_tier": self.trust_tier,
            "description": self.description,
            "matched_intents": list(self.matched_intents),
            "also_in": list(self.also_in),
        }


@dataclass(frozen=True)
class DisabledMatch:
    """An installed skill switched off (opt-in packages): named, never served."""

    skill: str
    score: float
    description: str
    also_in: list[str] = field(default_factory=list)

    @property
    def enable(self) -> str:
        return enable_command([self.skill])

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "score": round(self.score, 4),
            "description": self.description,
            "also_in": list(self.also_in),
            "enable": self.enable,
        }


@dataclass(frozen=True)
class SearchResponse:
    query: str
    mode: str
    results: list[SearchResult]
    lookup: str | None = None
    confidence: str = "high"  # high | low | none (docs/SEARCH.md "Confidence")
    disabled: list[DisabledMatch] = field(default_factory=list)
    installed: int = 0  # enabled skills in the catalog (0: nothing to search)
    disabled_lookup: str | None = None  # the query names this disabled skill
    # The best match is this disabled skill (it outscores every served result): said in the
    # headline, and confidence is never `high` (confidence.py). JSON: `disabled[0]`.
    best_disabled: str | None = None

    def to_json(self) -> dict[str, Any]:
        # `search --json` (the CLI's envelope adds schema_version and warnings)
        return {
            "query": self.query,
            "mode": self.mode,
            "confidence": self.confidence,
            "results": [r.to_json() for r in self.results],
            "disabled": [d.to_json() for d in self.disabled],
            "installed_skills": self.installed,
        }

    def headline(self, shown_query: str) -> str:
        """The first line: what kind of answer this is, in plain words."""
        if self.installed == 0 and not self.disabled:
            return f"No skills are installed. Install a package first: `{INSTALL_HINT}`."
        if self.disabled_lookup is not None:
            return (
                f"{self.disabled_lookup} is installed but disabled, so it is not served; "
                f"`{enable_command([self.disabled_lookup])}` turns it on."
            )
        if self.confidence == "none":
            if self.disabled:
                return f"No enabled skill matches {shown_query}; installed but disabled ones do:"
            return f"No installed skill matches {shown_query}."
        if self.best_disabled is not None and self.confidence != "high":
            closest = "the closest enabled skills are" if self.results else "nothing enabled"
            return (
                f"The best match for {shown_query}, {self.best_disabled}, is installed but "
                f"disabled (`{enable_command([self.best_disabled])}` turns it on); {closest}:"
            )
        if self.confidence == "low":
            closest = "the closest installed skills are" if self.results else "nothing close"
            return f"No strong match for {shown_query}; {closest}:"
        return f"Best matches for {shown_query}:"

    def render(self) -> str:
        lines = [
            f"{self.headline(repr(self.query))} (mode {self.mode}, confidence {self.confidence})"
        ]
        for n, r in enumerate(self.results, 1):
            lines.append(f"{n}. {r.skill} [{r.trust_tier}] {r.score:.3f}")
            if r.description:
                lines.append(f"   {r.description[:200]}")
            if r.matched_intents:
                lines.append(f"   intents: {'; '.join(r.matched_intents)}")
            if r.also_in:
                lines.append(f"   same skill also in: {', '.join(r.also_in)}")
        if self.disabled:
            lines.append("Installed but disabled (not served until enabled):")
            for d in self.disabled:
                lines.append(f"- {d.skill} {d.score:.3f}: `{d.enable}`")
                if d.description:
                    lines.append(f"   {d.description[:200]}")
        return "\n".join(lines) + "\n"


def build_response(
    query: str,
    mode: str,
    ranking: Ranking,
    records: list[SkillRecord],
    *,
    lookup: int | None,
    disabled_lookup: int | None,
    confidence: str,
    installed: int,
) -> SearchResponse:
    """Record indices of a ranking -> keys, descriptions, copies; a disabled skill the query
    names goes first among the disabled matches, whatever its score."""
    results = [
        SearchResult(
            skill=records[h.index].key,
            score=h.score,
            trust_tier=records[h.index].trust_tier,
            description=records[h.index].description,
            matched_intents=h.matched,
            also_in=[records[m].key for m in h.also_in],
        )
        for h in ranking.hits
    ]
    disabled = [
        DisabledMatch(
            records[h.index].key,
            h.score,
            records[h.index].description,
            [records[m].key for m in h.also_in],
        )
        for h in ranking.disabled
    ]
    if disabled_lookup is not None:
        named = records[disabled_lookup].key
        top = max((d.score for d in disabled), default=0.0)
        disabled = [
            DisabledMatch(named, top, records[disabled_lookup].description),
            *[d for d in disabled if d.skill != named and named not in d.also_in],
        ]
    return SearchResponse(
        query=query,
        mode=mode,
        results=results,
        lookup=records[lookup].key if lookup is not None else None,
        confidence=confidence,
        disabled=disabled,
        installed=installed,
        disabled_lookup=records[disabled_lookup].key if disabled_lookup is not None else None,
        best_disabled=disabled[0].skill if ranking.disabled_best and disabled else None,
    )
