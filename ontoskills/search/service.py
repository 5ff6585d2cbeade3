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
from ..config import Config
from ..embeddings.encoder import Encoder
from ..errors import NotFoundError, OntoskillsError, UsageError
from ..manifest import LOCAL_TIER, TIERS, tier_rank
from ..paths import Home
from .bm25 import BM25Index
from .encoder import derived_vectors_identity, encoder_identity, load_encoder
from .lookup import NameIndex
from .ranking import Ranker
from .tokenize import tokenize

if TYPE_CHECKING:
    from ..catalog.context import SkillContext

MAX_TOP_K = 50
MODES = ("auto", "bm25", "semantic", "hybrid")
MAX_QUERY_CHARS = 2000  # longer queries are cut: the encoder sees 128 tokens anyway
_CONTEXT_CACHE = 256  # parsed contexts (~50-300 KB each); an agent revisits a working set

__all__ = [
    "MAX_TOP_K",
    "MODES",
    "SearchResponse",
    "SearchResult",
    "SkillContext",
    "SkillService",
    "SkillSummary",
]


@dataclass(frozen=True)
class SearchResult:
    skill: str
    score: float
    trust_tier: str
    description: str
    matched_intents: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "score": round(self.score, 4),
            "trust_tier": self.trust_tier,
            "description": self.description,
            "matched_intents": list(self.matched_intents),
        }


@dataclass(frozen=True)
class SearchResponse:
    query: str
    mode: str
    results: list[SearchResult]
    lookup: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "query": self.query,
            "mode": self.mode,
            "results": [r.to_json() for r in self.results],
        }

    def render(self) -> str:
        if not self.results:
            return f"no skills match {self.query!r} (mode {self.mode})\n"
        lines = [f"{len(self.results)} skills for {self.query!r} (mode {self.mode}):"]
        for n, r in enumerate(self.results, 1):
            lines.append(f"{n}. {r.skill} [{r.trust_tier}] {r.score:.3f}")
            if r.description:
                lines.append(f"   {r.description[:200]}")
            if r.matched_intents:
                lines.append(f"   intents: {'; '.join(r.matched_intents)}")
        return "\n".join(lines) + "\n"


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


def check_min_trust(min_trust: str | None) -> int:
    if min_trust is None:
        return -1
    if min_trust not in (*TIERS, LOCAL_TIER):
        raise UsageError(f"unknown trust tier {min_trust!r}", hint=f"use one of {', '.join(TIERS)}")
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
    """Live view of the installed, enabled skills; the one entry point for search/show/serve."""

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
        data = load_snapshot(self.home.derived_dir, key, tree=self.home.ontologies)
        if data is None:
            from ..catalog.loader import build_catalog  # pyoxigraph: only when building

            encoder = self.encoder()
            encode = None
            if encoder is not None:
                encode = VectorCache(
                    self.home.derived_dir, str(signature[2]), encoder.encode
                ).encode
            data = build_catalog(self.home, lock, verification, encode=encode)
            ranker = Ranker(data, BM25Index, self.config.trust_weights)  # fills bm25_*
            if data.records or data.problems:  # an empty home stays untouched
                save_snapshot(self.home.derived_dir, key, data)
        else:
            ranker = Ranker(data, BM25Index, self.config.trust_weights)
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
        state = self.state
        idx = state.names.resolve(q)
        return state.data.records[idx].key if idx is not None else None

    def skills(self, *, min_trust: str | None = None) -> list[SkillSummary]:
        floor = check_min_trust(min_trust)
        return [
            SkillSummary(r.key, r.name, r.description, r.trust_tier, r.package)
            for r in sorted(self.state.data.records, key=lambda r: r.key)
            if tier_rank(r.trust_tier) >= floor
        ]

    def schema(self) -> dict[str, Any]:
        return dict(self.state.data.schema)

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

    def resolve_mode(self, mode: str) -> str:
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r}", hint=f"use one of {', '.join(MODES)}")
        if mode == "auto":
            mode = self.config.search_mode if self.config.search_mode != "auto" else "auto"
        if mode == "auto":
            return "hybrid" if self.semantic_available() else "bm25"
        if mode in ("semantic", "hybrid") and not self.semantic_available():
            raise UsageError(
                f"{mode} search needs intent vectors and the embedding model",
                hint="run `ontoskills install --with-embeddings`, or use --mode bm25",
            )
        return mode

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
        lookup_idx = state.names.resolve(text)
        if lookup_idx is not None and tier_rank(state.data.records[lookup_idx].trust_tier) < floor:
            lookup_idx = None
        qvec: np.ndarray | None = None
        if used in ("semantic", "hybrid"):
            encoder = self.encoder()
            assert encoder is not None
            qvec = encoder.encode_one(text)
        ranked = state.ranker.rank(tokenize(text), qvec, used, floor, top_k, lookup_idx)
        results = [
            SearchResult(
                skill=state.data.records[i].key,
                score=float(score),
                trust_tier=state.data.records[i].trust_tier,
                description=state.data.records[i].description,
                matched_intents=intents,
            )
            for i, score, intents in ranked
        ]
        lookup = state.data.records[lookup_idx].key if lookup_idx is not None else None
        return SearchResponse(query=q, mode=used, results=results, lookup=lookup)

    def record(self, key: str) -> SkillRecord:
        state = self.state
        idx = state.by_key.get(key)
        if idx is None:
            idx = state.names.resolve(key)
        if idx is None:
            raise NotFoundError(
                f"no installed, enabled skill named {key!r}",
                hint="`ontoskills search` finds skills; `ontoskills list` shows packages",
            )
        return state.data.records[idx]

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
