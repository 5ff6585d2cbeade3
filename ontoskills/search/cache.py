"""Parsed skill contexts and their split answers, kept within a byte budget, not a count.

A count bound held anything from a few KB to tens of MB: parsed contexts of the full
registry run from ~10 KB to ~1.3 MB of Python objects, a context split into answers
(`Disclosure`) ~8.6x its text at the median (docs/PERFORMANCE.md). Entries are weighed once,
when stored, by estimates calibrated with tracemalloc over the full registry; the least
recently used go first, but the newest entry is always kept (the one being answered).
Not thread-safe on its own: SkillService holds its lock around every call.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog.context import SkillContext
    from ..catalog.disclosure import Disclosure

# What an agent session revisits fits: ~50 typical skills (context + overview), or one of
# the largest (~0.7 MB of JSON) with room to spare. A miss costs one Turtle parse (p50 70 ms).
CACHE_BYTES = 8 * 1024 * 1024
CONTEXT_PER_CHAR = 2  # Python objects per JSON char of a context (tracemalloc: p50 1.6, p90 2.2)
DISCLOSURE_PER_CHAR = 10  # per char of its full text (text, parts, pages; p50 8.6)
ENTRY_OVERHEAD = 4096


def context_weight(ctx: SkillContext) -> int:
    fields = [
        ctx.requirements,
        ctx.knowledge,
        ctx.workflows,
        ctx.sections,
        ctx.code_examples,
        ctx.modules,
        ctx.notes,
    ]
    return CONTEXT_PER_CHAR * len(json.dumps(fields, default=str)) + ENTRY_OVERHEAD


def disclosure_weight(made: Disclosure) -> int:
    return DISCLOSURE_PER_CHAR * len(made.full) + ENTRY_OVERHEAD


class WeightedLRU:
    def __init__(self, budget: int | None = None) -> None:
        self.budget = CACHE_BYTES if budget is None else budget
        self.weight = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Any | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: Any, weight: int) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.weight -= old[1]
        self._items[key] = (value, weight)
        self.weight += weight
        while self.weight > self.budget and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self.weight -= dropped

    def clear(self) -> None:
        self._items.clear()
        self.weight = 0
