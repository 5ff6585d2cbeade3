"""Ranking as stages (docs/SEARCH.md "Ranking"), each a method with its own tests:

1. `score`: BM25 over the skills' documents, the semantic best vector per skill, hybrid
   fusion, trust weighting -> `Scores`, which every later stage reads;
2. `candidates`: the best-first walk that collapses copies (one `oc:contentHash`) into one
   hit, sets disabled skills aside (never served, but reported) and pins a looked-up skill;
3. later stages (`Stage`: a reranker, say), each reordering the candidates it is given;
4. `explain`: the matched intents of every hit and the evidence about the FINAL top hit that
   confidence.py judges (so a later stage that changes the top changes the evidence).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..catalog.model import CatalogData
from ..manifest import tier_rank
from .bm25 import BM25Index
from .documents import build_bm25, build_intents
from .semantic import SemanticIndex

HYBRID_ALPHA = 0.5  # weight of the semantic side in the fused score
# With views (the semantic side reads each skill whole, semantic.py), BM25's side counts in
# full only when its own winner explains at least this share of the query's idf mass
# (bm25.evidence), and proportionally less below: a winner that matches one stray word of a
# paraphrase is no evidence, and the meaning side is then strong enough to decide alone
# (issue 26; chosen on the dev sets: docs/SEARCH.md "Views").
BM25_FULL_COVERAGE = 0.5
MAX_MATCHED_INTENTS = 3
MAX_DISABLED = 3  # disabled skills reported per answer
DISABLED_SHARE = 0.5  # ... and only those scoring at least this share of the best match


def _descending(score: np.ndarray, idx: np.ndarray, first: int) -> Iterator[int]:
    """`idx` by descending score, ties by index (a stable sort), sorting only the best
    `first` (and their ties) unless the caller reads past them: copies and disabled skills
    are skipped, so the walk may need a few more than top_k, rarely all."""
    if len(idx) > first:
        threshold = np.partition(score[idx], len(idx) - first)[len(idx) - first]
        head = idx[score[idx] >= threshold]
        yield from head[np.argsort(-score[head], kind="stable")].tolist()
        idx = idx[score[idx] < threshold]
    yield from idx[np.argsort(-score[idx], kind="stable")].tolist()


@dataclass
class Hit:
    index: int  # the record shown (the most trusted enabled copy, or the one looked up)
    score: float
    also_in: list[int] = field(default_factory=list)  # other copies, most trusted first
    matched: list[str] = field(default_factory=list)
    scored: int = -1  # the copy whose score this is (confidence evidence is read from it)


@dataclass
class Ranking:
    hits: list[Hit]
    disabled: list[Hit]  # installed-but-disabled skills that would rank among the hits
    best_cosine: float | None = None  # of the top hit (None: no semantic side)
    best_meaning: float | None = None  # of the top hit, when the catalog has views
    coverage: float = 0.0  # of the query by the top hit (bm25.evidence)
    unknown: float = 0.0  # of the query by no installed skill at all (bm25.evidence)
    # Hybrid only: where each ranker alone puts the top hit (1 = first; copies count once;
    # None: not hybrid, or that ranker gives it nothing). Their agreement is confidence
    # evidence (confidence.py).
    bm25_rank: int | None = None
    semantic_rank: int | None = None
    wordless: bool = False  # the query has no search terms ("?!?", emoji): see confidence
    # A disabled skill outscores every served hit: the served list is not the best answer
    # the catalog has, so confidence must not call it `high` (issue 26).
    disabled_best: bool = False


@dataclass(frozen=True)
class Scores:
    """Stage 1's output for one query; read by every later stage."""

    terms: list[str]  # the query's search terms (tokenize.py)
    mode: str  # bm25, semantic or hybrid (never auto)
    bm: np.ndarray  # BM25 per skill (zeros in semantic mode)
    sem: np.ndarray  # best cosine per skill over its vectors (zeros without a semantic side)
    sims: np.ndarray | None  # cosine per vector row (None: no semantic side)
    final: np.ndarray  # the mode's score x trust weight: the order candidates are taken in
    # mean of the best intent's and the views' cosines per skill (None: no views)
    meaning: np.ndarray | None = None


class Stage(Protocol):
    """A later stage: reorders (or rescores) the candidates, never adds a skill."""

    depth: int  # how many candidates it wants to see (the cut to top_k comes after it)

    def __call__(self, scores: Scores, hits: list[Hit]) -> list[Hit]: ...


class Ranker:
    def __init__(
        self, data: CatalogData, bm25_cls: type[BM25Index], trust_weights: dict[str, float]
    ) -> None:
        self.records = data.records
        self.bm25, bm25_reused = build_bm25(data, bm25_cls)
        self.intents, intents_reused = build_intents(data)
        self.reused = bm25_reused and intents_reused  # both read from the snapshot
        self.semantic = (
            SemanticIndex(data.vectors, data.vector_owner, len(data.records), data.views)
            if data.has_vectors
            else None
        )
        self.vector_text = data.vector_text
        self.trust = np.asarray(
            [trust_weights.get(r.trust_tier, 1.0) for r in data.records], dtype=np.float32
        )
        self.tier = np.asarray([tier_rank(r.trust_tier) for r in data.records], dtype=np.int8)
        self.enabled = np.asarray([r.enabled for r in data.records], dtype=np.bool_)
        self.n_enabled = int(self.enabled.sum())
        # Copies: the same oc:contentHash (compiled from the same source) form one group,
        # members most trusted first, then by key (a stable tie-break).
        first: dict[str, int] = {}
        self.group = np.arange(len(self.records), dtype=np.int32)
        for i, r in enumerate(self.records):
            if r.content_hash:
                self.group[i] = first.setdefault(r.content_hash, i)
        self.members: dict[int, list[int]] = {}
        for i in range(len(self.records)):
            self.members.setdefault(int(self.group[i]), []).append(i)
        for ids in self.members.values():
            ids.sort(key=lambda i: (-int(self.tier[i]), self.records[i].key))

    def rank(
        self,
        terms: list[str],
        qvec: np.ndarray | None,
        mode: str,
        floor: int,
        top_k: int,
        lookup: int | None,
        stages: Sequence[Stage] = (),
    ) -> Ranking:
        """The stages in order; `floor`: the lowest tier rank shown; `lookup`: the skill the
        query names (kept first, whatever a later stage does)."""
        if not self.records:
            return Ranking([], [])
        scores = self.score(terms, qvec, mode)
        depth = max([top_k, *(s.depth for s in stages)])
        hits, disabled = self.candidates(scores, floor, depth, lookup)
        pinned = 1 if lookup is not None else 0
        for stage in stages:
            hits = hits[:pinned] + stage(scores, hits[pinned:])
        return self.explain(scores, hits[:top_k], disabled, floor)

    # ------------------------------------------------------------ 1. score
    def fuse(
        self, bm: np.ndarray, sem: np.ndarray, terms: Sequence[str] | None = None
    ) -> np.ndarray:
        """BM25 and meaning (semantic.meaning), each over its best, weighed; given the
        query's terms and a catalog with views, BM25 weighed by its winner's coverage."""
        top_bm = float(bm.max()) if len(bm) else 0.0
        bm_n = bm / top_bm if top_bm > 0 else bm
        views = self.semantic is not None and self.semantic.views is not None
        if terms is not None and top_bm > 0 and views:
            coverage, _ = self.bm25.evidence(list(terms), int(np.argmax(bm)))
            bm_n = bm_n * min(1.0, coverage / BM25_FULL_COVERAGE)
        sem_c = np.clip(sem, 0.0, None)
        top_sem = float(sem_c.max()) if len(sem_c) else 0.0
        sem_n = sem_c / top_sem if top_sem > 0 else sem_c
        return HYBRID_ALPHA * sem_n + (1 - HYBRID_ALPHA) * bm_n

    def score(self, terms: list[str], qvec: np.ndarray | None, mode: str) -> Scores:
        n = len(self.records)
        bm = self.bm25.scores(terms) if mode != "semantic" else np.zeros(n, np.float32)
        sims: np.ndarray | None = None
        sem = meaning = np.zeros(n, np.float32)
        with_views: np.ndarray | None = None
        if qvec is not None and self.semantic is not None:
            sims = self.semantic.similarities(qvec)
            sem = self.semantic.best_per_skill(sims)
            meaning = self.semantic.meaning(qvec, sem)
            with_views = meaning if self.semantic.views is not None else None
        if mode == "bm25":
            score = bm
        elif mode == "semantic":
            score = np.clip(meaning, 0.0, None)
        else:
            score = self.fuse(bm, meaning, terms)
        return Scores(terms, mode, bm, sem, sims, score * self.trust, with_views)

    # ------------------------------------------------------------ 2. candidates
    def candidates(
        self, scores: Scores, floor: int, depth: int, lookup: int | None
    ) -> tuple[list[Hit], list[Hit]]:
        """(hits, disabled): up to `depth` served hits best first, one per copy group (its
        most trusted enabled copy shown, the others in `also_in`), the looked-up skill
        first; groups whose every copy is disabled are set aside, strong ones reported."""
        score = scores.final
        visible = self.tier >= floor
        hits: list[Hit] = []
        disabled: list[Hit] = []
        seen: set[int] = set()
        if lookup is not None:
            best = float(score.max()) if len(score) else 0.0
            g = int(self.group[lookup])
            seen.add(g)
            hits.append(
                Hit(lookup, max(best, float(score[lookup]), 1e-6), self._copies(g, lookup, floor))
            )
            hits[0].scored = lookup
        idx = np.flatnonzero((score > 0) & visible)
        for i in _descending(score, idx, 4 * depth + 16):
            if len(hits) >= depth:
                break
            g = int(self.group[i])
            if g in seen:
                continue
            seen.add(g)
            shown = next((m for m in self.members[g] if self.enabled[m] and visible[m]), None)
            if shown is None:  # every copy is disabled: report it, serve nothing
                if len(disabled) < MAX_DISABLED:
                    rep = self.members[g][0]
                    disabled.append(
                        Hit(rep, float(score[i]), [m for m in self.members[g] if m != rep], [], i)
                    )
                continue
            hits.append(Hit(shown, float(score[i]), self._copies(g, shown, floor), [], i))
        if disabled:  # only strong ones: a weak disabled match is noise next to the hits
            best = float(score[idx].max()) if len(idx) else 0.0
            disabled = [h for h in disabled if h.score >= DISABLED_SHARE * best]
        return hits, disabled

    # ------------------------------------------------------------ 4. explain
    def explain(self, scores: Scores, hits: list[Hit], disabled: list[Hit], floor: int) -> Ranking:
        """Matched intents for every hit, and the confidence evidence of the top one."""
        terms, sims = scores.terms, scores.sims
        for h in (*hits, *disabled):
            h.matched = self.matched(h.scored, terms, sims)
        ranking = Ranking(hits, disabled, wordless=not terms)
        if not hits:
            return ranking
        # disabled[0] is the best disabled group (taken best first); a looked-up hit is
        # pinned at the best score of all, so it is never outscored here.
        ranking.disabled_best = bool(disabled) and disabled[0].score > hits[0].score
        top = hits[0].scored
        ranking.coverage, ranking.unknown = self.bm25.evidence(terms, top)
        if sims is not None:
            ranking.best_cosine = float(scores.sem[top])
            if scores.meaning is not None:
                ranking.best_meaning = float(scores.meaning[top])
            if scores.mode == "hybrid":  # agreement needs both rankers
                served = (self.tier >= floor) & self.enabled
                ranking.bm25_rank = self._rank_of(scores.bm * self.trust, top, served)
                sem_side = np.clip(scores.sem, 0.0, None) * self.trust
                ranking.semantic_rank = self._rank_of(sem_side, top, served)
        return ranking

    def _rank_of(self, score: np.ndarray, i: int, among: np.ndarray) -> int | None:
        """Rank of skill i's copy group under one ranker's scores: 1 + the groups among
        `among` whose best copy scores strictly higher than the group's best (None when
        that ranker gives the group nothing: all-zero scores are no agreement)."""
        members = self.members[int(self.group[i])]
        best = max(float(score[m]) for m in members)
        if best <= 0:
            return None
        ids = self.group[among & (score > best)]
        # A set is ~10x cheaper than np.unique for the few ids a top hit usually has above it
        return 1 + (len(set(ids.tolist())) if len(ids) <= 256 else len(np.unique(ids)))

    def _copies(self, group: int, shown: int, floor: int) -> list[int]:
        """The other enabled copies a user may also ask for by key."""
        return [
            m
            for m in self.members[group]
            if m != shown and self.enabled[m] and int(self.tier[m]) >= floor
        ]

    def matched(self, i: int, terms: list[str], sims: np.ndarray | None) -> list[str]:
        found: list[str] = []
        r = self.records[i]
        not_intents = {r.summary_text}  # the description vector (catalog/builder.py)
        if sims is not None and self.semantic is not None:
            rows = self.semantic.top_rows(sims, i, n=4)
            found.extend(t for row in rows if (t := self.vector_text[row]) and t not in not_intents)
        found.extend(r.intents[n] for n in self.intents.overlap(i, terms))
        return list(dict.fromkeys(found))[:MAX_MATCHED_INTENTS]
