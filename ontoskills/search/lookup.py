"""Recognise a query that names a skill: key, pkg/skill, manifest id, identifier, IRI.

Names are compared in a normal form (folded, camelCase/kebab/snake unified), so
`systematicDebugging`, `Systematic_Debugging` and `systematic-debugging` meet. Near misses
(one edit, two for long names) count only for single-word queries.
"""

from __future__ import annotations

from ..catalog.model import SkillRecord
from ..manifest import tier_rank
from ..skillheader import local_name
from .tokenize import words

MAX_NAME_QUERY = 200


def norm(name: str) -> str:
    return "-".join(words(name))


def _edits_within(a: str, b: str, limit: int) -> bool:
    """Damerau-Levenshtein distance <= limit (small limits, early exit)."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return False
        prev2, prev = prev, cur
    return prev[-1] <= limit


class NameIndex:
    def __init__(self, records: list[SkillRecord]) -> None:
        self.records = records
        self.exact: dict[str, list[int]] = {}  # full names (key, IRI) -> record
        self.short: dict[str, list[int]] = {}  # ids that repeat across packages
        for i, r in enumerate(records):
            pkg_name = r.package.rsplit("/", 1)[-1]
            for full in (r.key, r.iri, local_name(r.iri), f"{r.package}/{r.identifier}"):
                self.exact.setdefault(full.lower(), []).append(i)
            for name in {r.skill_id, r.identifier, r.name}:
                if name and norm(name):
                    self.short.setdefault(norm(name), []).append(i)
                    self.exact.setdefault(f"{pkg_name}/{name}".lower(), []).append(i)

    def _best(self, hits: list[int], enabled: bool) -> int | None:
        # The same id in several packages: the most trusted, then alphabetical key.
        mine = {i for i in hits if self.records[i].enabled == enabled}
        if not mine:
            return None
        rank = lambda i: (-tier_rank(self.records[i].trust_tier), self.records[i].key)  # noqa: E731
        return min(mine, key=rank)

    def same_named(self, q: str) -> list[int]:
        """The enabled skills a short name (`pdf`) picks among when several packages ship one
        by that name; [] when `q` is a full name (key, pkg/skill, IRI) or names one skill."""
        q = q.strip()
        if not q or len(q) > MAX_NAME_QUERY or q.lower().removeprefix("oc:") in self.exact:
            return []
        hits = sorted(
            {i for i in self.short.get(norm(q), []) if self.records[i].enabled},
            key=lambda i: self.records[i].key,
        )
        return hits if len(hits) > 1 else []

    def resolve(self, q: str, *, enabled: bool = True) -> int | None:
        """The skill `q` names among the enabled (or, with enabled=False, disabled) ones."""
        q = q.strip()
        if not q or len(q) > MAX_NAME_QUERY:
            return None
        low = q.lower().removeprefix("oc:")
        if low in self.exact and (best := self._best(self.exact[low], enabled)) is not None:
            return best
        n = norm(q)
        if not n:
            return None
        if n in self.short and (best := self._best(self.short[n], enabled)) is not None:
            return best
        if len(n) < 5 or any(c.isspace() for c in q):
            return None
        limit = 1 if len(n) < 10 else 2
        hits = [i for name, ids in self.short.items() if _edits_within(n, name, limit) for i in ids]
        return self._best(hits, enabled)
