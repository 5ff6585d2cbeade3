"""SkillService: the live view of installed, enabled skills behind CLI search/show and serve.

Contract: /docs/SEARCH.md (shared with the MCP server). Thread-safe: reads use an immutable
state object swapped in one assignment; reloads are serialised by a lock.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..catalog.local import local_skill_files
from ..catalog.lockcache import load_lock
from ..catalog.model import CatalogData, SkillRecord
from ..catalog.snapshot import load_snapshot, save_snapshot, snapshot_key
from ..catalog.vectorcache import VectorCache
from ..catalog.verify import check_verify_mode, verify_tree
from ..config import DEFAULT_CONTEXT_BUDGET, Config, SearchMode
from ..embeddings.encoder import Encoder
from ..errors import NotFoundError, OntoskillsError, UsageError
from ..manifest import Tier, tier_rank
from ..paths import Home
from . import MAX_TOP_K
from .answer import (
    DisabledMatch,
    SearchResponse,
    SearchResult,
    build_response,
    enable_command,
)
from .bm25 import BM25Index
from .confidence import judge
from .encoder import derived_vectors_identity, encoder_identity, load_encoder
from .lookup import NameIndex
from .ranking import Ranker
from .tokenize import tokenize

if TYPE_CHECKING:
    from ..catalog.context import SkillContext
    from ..catalog.disclosure import ContextAnswer, Disclosure
    from ..catalog.parts import Part

MAX_QUERY_CHARS = 2000  # longer queries are cut: the encoder sees 128 tokens anyway
_CONTEXT_CACHE = 256  # parsed contexts (~50-300 KB each); an agent revisits a working set
_DISCLOSURE_CACHE = 32  # split contexts (parts ~2x the context's text): the skills in use

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

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _State:
    signature: tuple[Any, ...]
    data: CatalogData
    ranker: Ranker
    names: NameIndex
    by_key: dict[str, int]
    semantic_ok: bool | None = None  # vectors + an encoder of their dimension (checked lazily)
    contexts: OrderedDict[str, SkillContext] = field(default_factory=OrderedDict)
    disclosures: OrderedDict[tuple[str, int], Disclosure] = field(default_factory=OrderedDict)


def check_min_trust(min_trust: str | None) -> int:
    """The rank below which results are hidden (-1: none). The CLI's typer choice has already
    refused a wrong word; this guards library callers with the same set."""
    if min_trust is None:
        return -1
    if Tier.get(min_trust) is None:
        raise UsageError(f"unknown trust tier {min_trust!r}", hint=f"use one of {Tier.listed()}")
    return tier_rank(min_trust)


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


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
    ) -> None:
        self.home = home
        self.lockfile = lockfile
        self.config = config
        self.verify = check_verify_mode(verify)
        self._factory = encoder_factory or (lambda: load_encoder(home, config))
        self._encoder: Encoder | None = None
        self._encoder_loaded = False
        self._lock = threading.RLock()
        self._state: _State | None = None
        self.refresh()

    # ------------------------------------------------------------------ loading
    def encoder(self) -> Encoder | None:
        if not self._encoder_loaded:
            with self._lock:
                if not self._encoder_loaded:
                    self._encoder = self._factory()
                    self._encoder_loaded = True
        return self._encoder

    def _signature(self) -> tuple[Any, ...]:
        local = tuple((str(p), *(_stat(p) or ())) for p in local_skill_files(self.home))
        model = encoder_identity(self.home, self.config)
        return (_stat(self.lockfile), local, model, derived_vectors_identity(self.home))

    def refresh(self) -> bool:
        """Reload when the lock, the local skills or the model changed; True if reloaded."""
        signature = self._signature()
        state = self._state
        if state is not None and state.signature == signature:
            return False
        with self._lock:
            if self._state is not None and self._state.signature == signature:
                return False
            if self._state is None or self._state.signature[2] != signature[2]:
                self._encoder_loaded = False  # the model appeared, changed or went away
            try:
                self._state = self._load(signature)
            except OntoskillsError as exc:
                if self._state is None:
                    raise
                # Keep serving what we had (e.g. a lock caught mid-edit); retried next call.
                if str(exc) not in self._state.data.problems:
                    self._state.data.problems.append(str(exc))
                return False
            return True

    def _load(self, signature: tuple[Any, ...]) -> _State:
        lock, lock_digest = load_lock(self.lockfile, self.home.derived_dir)
        verification = verify_tree(self.home, lock, self.verify)
        key = snapshot_key(
            lock_digest,
            str(self.home.root),
            repr(sorted((p, sorted(v)) for p, v in verification.bad.items())),
            repr(signature[1]),
            str(signature[2]),
            str(signature[3]),
            "encoder" if self.encoder() is not None else "no-encoder",
        )
        data = load_snapshot(self.home.derived_dir, key)
        weights = self.config.search.trust_weights
        ranker = Ranker(data, BM25Index, weights) if data is not None else None
        if data is None or ranker is None or not ranker.bm25_reused:
            # No snapshot, or postings that do not fit it: rebuild from the tree (the body
            # text the postings are made of is not in the snapshot).
            from ..catalog.loader import build_catalog  # pyoxigraph: only when building

            encoder = self.encoder()
            encode = None
            if encoder is not None:
                encode = VectorCache(
                    self.home.derived_dir, str(signature[2]), encoder.encode
                ).encode
            data = build_catalog(self.home, lock, verification, encode=encode)
            ranker = Ranker(data, BM25Index, self.config.search.trust_weights)  # fills bm25_*
            if data.records or data.problems:  # an empty home stays untouched
                save_snapshot(self.home.derived_dir, key, data)
        return _State(
            signature=signature,
            data=data,
            ranker=ranker,
            names=NameIndex(data.records),
            by_key={r.key: i for i, r in enumerate(data.records)},
        )

    @property
    def state(self) -> _State:
        state = self._state
        assert state is not None
        return state

    # ------------------------------------------------------------------ queries
    @property
    def problems(self) -> list[str]:
        return list(self.state.data.problems)

    def resolve(self, q: str) -> str | None:
        """The key of the enabled skill `q` names, or None."""
        state = self.state
        idx = state.names.resolve(q)
        return state.data.records[idx].key if idx is not None else None

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
        state = self.state
        if state.semantic_ok is None:
            encoder = self.encoder() if state.data.has_vectors else None
            ok = encoder is not None
            if encoder is not None and encoder.dimension != state.data.vectors.shape[1]:
                state.data.problems.append(
                    f"intent vectors are {state.data.vectors.shape[1]}-dim but the model makes "
                    f"{encoder.dimension}-dim vectors; semantic search is off"
                )
                ok = False
            state.semantic_ok = ok
        return state.semantic_ok

    def resolve_mode(self, mode: str) -> SearchMode:
        """The mode a search runs in: `auto` -> `[search] mode` -> hybrid when the model and
        vectors are there, else bm25."""
        asked = SearchMode.get(mode)
        if asked is None:
            raise UsageError(
                f"unknown search mode {mode!r}", hint=f"use one of {SearchMode.listed()}"
            )
        if asked == SearchMode.AUTO:
            asked = self.config.search.mode
        if asked == SearchMode.AUTO:
            return SearchMode.HYBRID if self.semantic_available() else SearchMode.BM25
        if asked in (SearchMode.SEMANTIC, SearchMode.HYBRID) and not self.semantic_available():
            raise UsageError(
                f"{asked} search needs intent vectors and the embedding model",
                hint="run `ontoskills install --with-embeddings`, or use --mode bm25",
            )
        return asked

    def search(
        self, q: str, *, top_k: int = 5, mode: str = "auto", min_trust: str | None = None
    ) -> SearchResponse:
        if not isinstance(q, str) or not q.strip():
            raise UsageError("the query is empty", hint='pass what you need, e.g. "debug a test"')
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise UsageError(f"top_k must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}")
        floor = check_min_trust(min_trust)
        used = self.resolve_mode(mode)
        state = self.state
        text = q[:MAX_QUERY_CHARS]
        records = state.data.records
        lookup_idx = state.names.resolve(text)
        if lookup_idx is not None and tier_rank(records[lookup_idx].trust_tier) < floor:
            lookup_idx = None
        off_idx = state.names.resolve(text, enabled=False) if lookup_idx is None else None
        if off_idx is not None and tier_rank(records[off_idx].trust_tier) < floor:
            off_idx = None
        qvec: np.ndarray | None = None
        if used in (SearchMode.SEMANTIC, SearchMode.HYBRID):
            encoder = self.encoder()
            assert encoder is not None
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
        state = self.state
        idx = state.by_key.get(key)
        if idx is None:
            idx = state.names.resolve(key)
        if idx is None:
            idx = state.names.resolve(key, enabled=False)
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

    def context(self, key: str) -> SkillContext:
        rec = self.record(key)
        state = self.state
        with self._lock:
            ctx = state.contexts.get(rec.key)
            if ctx is not None:
                state.contexts.move_to_end(rec.key)
                return ctx
        from ..catalog.context import load_context

        ctx = load_context(rec)
        with self._lock:
            state.contexts[rec.key] = ctx
            while len(state.contexts) > _CONTEXT_CACHE:
                state.contexts.popitem(last=False)
        return ctx

    # ------------------------------------------------------------------ sized context
    def resolve_context(self, q: str) -> tuple[str, str | None] | None:
        """(key, part spec or None) when `q` names a skill ('pdf') or one of its parts
        ('acme/docs/pdf#knowledge/2'); None for anything else (a search)."""
        from ..catalog.disclosure import split_ref

        # The '#' split first: "pdf#code" is pdf's code, even if a skill "pdf-code" exists.
        ref = split_ref(q)
        if ref is not None and (key := self.resolve(ref[0])) is not None:
            return key, ref[1]
        key = self.resolve(q)  # a plain name, or an IRI (whose '#' is its own)
        return (key, None) if key is not None else None

    def disclosure(self, key: str, budget: int = DEFAULT_CONTEXT_BUDGET) -> Disclosure:
        """The skill's parts and budgeted answers (cached per skill and budget)."""
        rec = self.record(key)
        state = self.state
        with self._lock:
            found = state.disclosures.get((rec.key, budget))
            if found is not None:
                state.disclosures.move_to_end((rec.key, budget))
                return found
        from ..catalog.disclosure import Disclosure

        made = Disclosure(self.context(rec.key), budget)
        with self._lock:
            state.disclosures[(rec.key, budget)] = made
            while len(state.disclosures) > _DISCLOSURE_CACHE:
                state.disclosures.popitem(last=False)
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
