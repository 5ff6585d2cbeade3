"""SkillService: the live view of installed, enabled skills behind CLI search/show and serve.

Contract: /docs/SEARCH.md (shared with the MCP server). When to reload and from what is the
catalog's business (catalog/live.py); this module ranks, looks names up and sizes contexts.
Thread-safe: each request reads one immutable catalog view (`LiveCatalog.view`, swapped in
one assignment, reloads serialised); the per-view caches below are guarded by a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..catalog.live import LiveCatalog, View
from ..catalog.model import CatalogData, SkillRecord
from ..config import DEFAULT_CONTEXT_BUDGET, Config, SearchMode
from ..embeddings.encoder import Encoder
from ..errors import UsageError
from ..manifest import Tier, tier_rank
from ..paths import Home
from ..progress import Reporter
from ..query import clean, scored, split_ref
from . import MAX_TOP_K, crosslingual
from .answer import (
    DisabledMatch,
    SearchResponse,
    SearchResult,
    build_response,
)
from .bm25 import BM25Index
from .cache import context_weight, disclosure_weight
from .confidence import judge
from .lookup import NameIndex
from .ranking import Ranker
from .tokenize import tokenize
from .viewstate import ViewState, disabled_idx, resolve_key, served_record

if TYPE_CHECKING:
    from ..catalog.context import SkillContext
    from ..catalog.disclosure import ContextAnswer, Disclosure
    from ..catalog.parts import Part

__all__ = [
    "DisabledMatch",
    "SearchResponse",
    "SearchResult",
    "SkillContext",
    "SkillService",
    "SkillSummary",
]


@dataclass(frozen=True)
class SkillSummary:
    key: str
    name: str
    description: str
    trust_tier: str
    package: str


def check_min_trust(min_trust: str | None) -> int:
    """The rank below which results are hidden (-1: none). The CLI's typer choice has already
    refused a wrong word; this guards library callers with the same set."""
    if min_trust is None:
        return -1
    if Tier.get(min_trust) is None:
        raise UsageError(f"unknown trust tier {min_trust!r}", hint=f"use one of {Tier.listed()}")
    return tier_rank(min_trust)


def __getattr__(name: str) -> Any:
    """`SkillContext` (part of the contract) without importing pyoxigraph at start-up."""
    if name == "SkillContext":
        from ..catalog.context import SkillContext

        return SkillContext
    raise AttributeError(name)


class SkillService:
    """Live view of the installed skills; the one entry point for search/show/serve.

    Only enabled skills are served (results, lookup, context, skills()); disabled ones are
    indexed so that a search or a lookup can name them with the command that enables them.
    """

    def __init__(
        self,
        home: Home,
        lockfile: Path,
        config: Config,
        *,
        verify: str = "full",
        encoder_factory: Callable[[], Encoder | None] | None = None,
        build_in_child: bool = False,
        reporter: Reporter | None = None,
    ) -> None:
        """build_in_child: a missing snapshot is built by a child process (search/rebuild.py)
        and read back, for long-lived processes (the server); not with `encoder_factory`,
        which a child could not use; reporter: told when the index is built, not read back."""
        self.config = config
        self._lock = threading.Lock()  # the per-view context caches
        rebuild = None
        if build_in_child and encoder_factory is None:
            from .rebuild import rebuild_elsewhere

            def rebuild() -> bool:
                return rebuild_elsewhere(home, lockfile, config, verify)

        self.catalog: LiveCatalog[ViewState] = LiveCatalog(
            home,
            lockfile,
            config,
            index=self._index,
            verify=verify,
            encoder_factory=encoder_factory,
            rebuild=rebuild,
            reporter=reporter,
        )

    def _index(self, data: CatalogData, fresh: bool) -> ViewState | None:
        """The ranker over a new catalog view; None when a snapshot's stored BM25 postings or
        intent terms do not fit it (the catalog then rebuilds from the tree, and the ranker
        fills them)."""
        ranker = Ranker(data, BM25Index, self.config.search.trust_weights)
        if not fresh and not ranker.reused:
            return None
        return ViewState(
            data=data,
            ranker=ranker,
            names=NameIndex(data.records),
            by_key={r.key: i for i, r in enumerate(data.records)},
        )

    def refresh(self) -> bool:
        """Reload when the lock, the local skills or the model changed; True if reloaded."""
        return self.catalog.refresh()

    @property
    def state(self) -> ViewState:
        return self.catalog.view.index

    # ------------------------------------------------------------------ queries
    # Each request reads `self.catalog.view` once and passes it (or its state) down: a
    # concurrent reload must not hand one request two different catalogs.
    @property
    def problems(self) -> list[str]:
        return list(self.state.data.problems)

    def resolve(self, q: str) -> str | None:
        """The key of the enabled skill `q` names, or None."""
        return resolve_key(self.state, q)

    def skills(self, *, min_trust: str | None = None) -> list[SkillSummary]:
        """The served (enabled) skills."""
        floor = check_min_trust(min_trust)
        return [
            SkillSummary(r.key, r.name, r.description, r.trust_tier, r.package)
            for r in sorted(self.state.data.records, key=lambda r: r.key)
            if r.enabled and tier_rank(r.trust_tier) >= floor
        ]

    def disabled_skills(self) -> list[str]:
        """Keys of installed skills that are switched off."""
        return sorted(r.key for r in self.state.data.records if not r.enabled)

    def schema(self) -> dict[str, Any]:
        from ..catalog.schema import with_flow

        return with_flow(self.state.data.schema)

    def semantic_available(self) -> bool:
        return _semantic_ok(self.catalog.view)

    def resolve_mode(self, mode: str) -> SearchMode:
        """The mode a search runs in: `auto` -> `[search] mode` -> hybrid when the model and
        vectors are there, else bm25."""
        return self._mode(self.catalog.view, mode)

    def _mode(self, view: View[ViewState], mode: str) -> SearchMode:
        asked = SearchMode.get(mode)
        if asked is None:
            raise UsageError(
                f"unknown search mode {mode!r}", hint=f"use one of {SearchMode.listed()}"
            )
        if asked == SearchMode.AUTO:
            asked = self.config.search.mode
        if asked == SearchMode.AUTO:
            return SearchMode.HYBRID if _semantic_ok(view) else SearchMode.BM25
        if asked in (SearchMode.SEMANTIC, SearchMode.HYBRID) and not _semantic_ok(view):
            raise UsageError(
                f"{asked} search needs intent vectors and the embedding model",
                hint="run `ontoskills install --with-embeddings`, or use --mode bm25",
            )
        return asked

    def search(
        self, q: str, *, top_k: int = 5, mode: str = "auto", min_trust: str | None = None
    ) -> SearchResponse:
        if not isinstance(q, str):
            raise UsageError("the query must be a string")
        q = clean(q)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise UsageError(f"top_k must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}")
        floor = check_min_trust(min_trust)
        view = self.catalog.view
        used = self._mode(view, mode)
        state = view.index
        text = scored(q)
        records = state.data.records
        lookup_idx = state.names.resolve(text)
        if lookup_idx is not None and tier_rank(records[lookup_idx].trust_tier) < floor:
            lookup_idx = None
        off_idx = disabled_idx(state, text) if lookup_idx is None else None
        if off_idx is not None and tier_rank(records[off_idx].trust_tier) < floor:
            off_idx = None
        # Issue 26: a query in another language is searched as its English rendering
        # (crosslingual.py); English comes back unchanged. Names were resolved above.
        text = crosslingual.english(text, state.ranker.bm25.terms)
        qvec: np.ndarray | None = None
        if used in (SearchMode.SEMANTIC, SearchMode.HYBRID):
            encoder = view.encoder.get()
            assert encoder is not None  # _mode checked it for this view
            qvec = encoder.encode_one(text)
        ranking = state.ranker.rank(tokenize(text), qvec, used, floor, top_k, lookup_idx)
        return build_response(
            q,
            used,
            ranking,
            records,
            lookup=lookup_idx,
            disabled_lookup=off_idx,
            confidence=judge(ranking, used, lookup_idx is not None, state.ranker.n_enabled),
            installed=state.ranker.n_enabled,
        )

    def record(self, key: str) -> SkillRecord:
        return served_record(self.state, key)

    def context(self, key: str) -> SkillContext:
        state = self.state
        return self._context(state, served_record(state, key))

    def _context(self, state: ViewState, rec: SkillRecord, *, keep: bool = True) -> SkillContext:
        """The parsed context; `keep=False`: not cached on its own (a disclosure made of it
        holds it, and is weighed with it)."""
        with self._lock:
            ctx: SkillContext | None = state.cache.get(("ctx", rec.key))
            if ctx is not None:
                return ctx
        from ..catalog.context import load_context

        ctx = load_context(rec)
        if keep:
            weight = context_weight(ctx)
            with self._lock:
                state.cache.put(("ctx", rec.key), ctx, weight)
        return ctx

    # ------------------------------------------------------------------ sized context
    def resolve_context(self, q: str) -> tuple[str, str | None] | None:
        """(key, part spec or None) when `q` names a skill ('pdf') or one of its parts
        ('acme/docs/pdf#knowledge/2'); None for anything else (a search)."""
        state = self.state
        # The '#' split first: "pdf#code" is pdf's code, even if a skill "pdf-code" exists.
        ref = split_ref(q)
        if ref is not None and (key := resolve_key(state, ref[0])) is not None:
            return key, ref[1]
        key = resolve_key(state, q)  # a plain name, or an IRI (whose '#' is its own)
        return (key, None) if key is not None else None

    def same_named(self, q: str) -> list[str]:
        """The keys of the enabled skills a short name picks among (`show pdf` with several
        packages shipping a `pdf`), the part after '#' aside; [] when `q` names one."""
        state = self.state
        ref = split_ref(q)
        if ref is None or q.strip().lower().removeprefix("oc:") in state.names.exact:
            hits = state.names.same_named(q)  # a name, or an IRI (whose '#' is its own)
        else:
            hits = state.names.same_named(ref[0])
        return [state.data.records[i].key for i in hits]

    def disclosure(self, key: str, budget: int = DEFAULT_CONTEXT_BUDGET) -> Disclosure:
        """The skill's parts and budgeted answers (cached per skill and budget)."""
        state = self.state
        rec = served_record(state, key)
        with self._lock:
            found: Disclosure | None = state.cache.get(("disclosure", rec.key, budget))
            if found is not None:
                return found
        from ..catalog.disclosure import Disclosure

        made = Disclosure(self._context(state, rec, keep=False), budget)
        weight = disclosure_weight(made) + context_weight(made.ctx)
        with self._lock:
            state.cache.put(("disclosure", rec.key, budget), made, weight)
        return made

    def skill_answer(
        self, key: str, part: str | None = None, *, budget: int = DEFAULT_CONTEXT_BUDGET
    ) -> ContextAnswer:
        """What `ontoskill` returns for a skill: its overview, or the part (page) `part`
        names, within `budget` characters. NotFoundError for an unknown part or page."""
        made = self.disclosure(key, budget)
        return made.overview() if part is None else made.part(part)

    def part(self, key: str, spec: str) -> Part:
        """One whole part (no pages), for `show KEY#part`."""
        made = self.disclosure(key)
        found = made.parts.find(spec)
        if found is None:
            raise made.unknown_part(spec)
        return found


def _semantic_ok(view: View[ViewState]) -> bool:
    """Vectors and an encoder of their dimension, for this view (checked once per view)."""
    state = view.index
    if state.semantic_ok is None:
        encoder = view.encoder.get() if state.data.has_vectors else None
        ok = encoder is not None
        if encoder is not None and encoder.dimension != state.data.vectors.shape[1]:
            state.data.problems.append(
                f"intent vectors are {state.data.vectors.shape[1]}-dim but the model makes "
                f"{encoder.dimension}-dim vectors; semantic search is off"
            )
            ok = False
        state.semantic_ok = ok
    return state.semantic_ok
