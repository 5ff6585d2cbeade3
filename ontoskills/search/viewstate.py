"""What search makes of one catalog view (`ViewState`: the ranker, the name index, the
per-view caches), and the name lookups on it that search, show and the MCP tool share: the
enabled skill a name or key picks (`served_record`, NotFoundError saying how to enable a
disabled one), a disabled skill named (also as `skill#part`).

One `ViewState` per `LiveCatalog` view (search/service.py builds it): a reload makes a new
one, so nothing here is ever invalidated, only dropped with its view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..catalog.model import CatalogData, SkillRecord
from ..errors import NotFoundError
from ..query import split_ref
from .answer import enable_command
from .cache import WeightedLRU
from .lookup import NameIndex
from .ranking import Ranker


@dataclass
class ViewState:
    """What search makes of one catalog view: the ranker, the name index and caches."""

    data: CatalogData
    ranker: Ranker
    names: NameIndex
    by_key: dict[str, int]
    semantic_ok: bool | None = None  # vectors + an encoder of their dimension (checked lazily)
    # Parsed contexts ("ctx", key) and split answers ("disclosure", key, budget), within one
    # byte budget (cache.py): the skills an agent is working with.
    cache: WeightedLRU = field(default_factory=WeightedLRU)


def resolve_key(state: ViewState, q: str) -> str | None:
    idx = state.names.resolve(q)
    return state.data.records[idx].key if idx is not None else None


def served_record(state: ViewState, key: str) -> SkillRecord:
    """The enabled skill `key` names (its key or any of its names)."""
    idx = state.by_key.get(key)
    if idx is None:
        idx = state.names.resolve(key)
    if idx is None:
        idx = disabled_idx(state, key)
    if idx is None:
        raise NotFoundError(
            f"no installed skill named {key!r}",
            hint="`ontoskills search` finds skills; `ontoskills list` shows packages",
        )
    rec = state.data.records[idx]
    if not rec.enabled:
        raise NotFoundError(
            f"{rec.key} is installed but disabled, so it is not served",
            hint=f"`{enable_command([rec.key])}` turns it on",
        )
    return rec


def disabled_idx(state: ViewState, q: str) -> int | None:
    """The disabled skill `q` names, also as `skill#part` (asking for a part of a skill that
    is off must say how to turn it on, not search for the words)."""
    idx = state.names.resolve(q, enabled=False)
    if idx is None:
        ref = split_ref(q)
        if ref is not None:
            idx = state.names.resolve(ref[0], enabled=False)
    return idx
