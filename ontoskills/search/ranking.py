"""Scoring: BM25 documents per skill, semantic best-intent, hybrid fusion, trust weighting,
then copies collapsed and disabled skills set aside (never served, but reported).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..catalog.model import CatalogData, SkillRecord
from ..manifest import tier_rank
from .bm25 import BM25Index
from .semantic import SemanticIndex
from .tokenize import tokenize

# Header field weights: each field's terms are repeated this many times in the document.
FIELD_WEIGHTS = {
    "id": 3,
    "aliases": 2,
    "intents": 1,
    "description": 1,
    "category": 1,
    "nature": 1,
    "package": 1,
}
# Body kinds (skillheader.py BODY_PROPS) indexed in the body field, and their repeats.
BODY_KINDS = {"say": 1, "prose": 1}
HYBRID_ALPHA = 0.5  # weight of the semantic side in the fused score
MAX_MATCHED_INTENTS = 3
MAX_DISABLED = 3  # disabled skills reported per answer
DISABLED_SHARE = 0.5  # ... and only those scoring at least this share of the best match


def skill_document(r: SkillRecord) -> list[str]:
    names = " ".join(dict.fromkeys([r.skill_id, r.identifier, r.name]))
    fields = {
        "id": names,
        "aliases": " ".join(r.aliases),
        "intents": " . ".join(r.intents),
        "description": r.description,
        "category": r.category,
        "nature": r.nature,
        "package": r.package.rsplit("/", 1)[-1],
    }
    doc: list[str] = []
    for name, text in fields.items():
        doc.extend(tokenize(text, stop=True) * FIELD_WEIGHTS[name] if text else [])
    return doc


def body_document(body: dict[str, list[str]]) -> list[str]:
    doc: list[str] = []
    for kind, repeat in BODY_KINDS.items():
        texts = body.get(kind)
        if texts:  # one call per kind: thousands of short texts per skill
            doc.extend(tokenize("\n".join(texts), stop=True) * repeat)
    return doc


def _bm25(data: CatalogData, bm25_cls: type[BM25Index]) -> tuple[BM25Index, bool]:
    """(index, reused): from the snapshot's arrays when they fit, else built from the records
    and body text (and stored on `data`)."""
    if data.bm25_terms is not None and data.bm25_arrays is not None:
        try:
            index = bm25_cls.from_arrays(data.bm25_terms, data.bm25_arrays)
            if index.size == len(data.records):
                return index, True
        except (KeyError, ValueError, IndexError):
            pass  # damaged or stale: rebuild
    bodies = (
        [body_document(b) for b in data.bodies]
        if data.bodies is not None and len(data.bodies) == len(data.records)
        else None
    )
    index = bm25_cls([skill_document(r) for r in data.records], bodies)
    data.bm25_terms, data.bm25_arrays = index.to_arrays()
    return index, False


class IntentIndex:
    """Each skill's intents as the ids of their distinct search terms: tokenized once, when
    the index is built (and kept in the snapshot), never per search. A search compares ids
    for the few skills it returns; tokenizing a returned skill's intents per search took
    3-10 s for one with 100,000 of them (the catalog now also caps them, limits.py)."""

    def __init__(self, terms: list[str], arrays: dict[str, np.ndarray]) -> None:
        self.term_list = terms
        self.arrays = arrays
        self.skills = arrays["skills"]  # record i's intents are rows skills[i]:skills[i+1]
        self.starts = arrays["starts"]  # intent row r's term ids are ids[starts[r]:starts[r+1]]
        self.ids = arrays["ids"]
        self._terms: dict[str, int] | None = None

    @classmethod
    def build(cls, records: list[SkillRecord]) -> IntentIndex:
        vocab: dict[str, int] = {}
        skills, starts, ids = [0], [0], list[int]()
        for r in records:
            for text in r.intents:
                ids.extend(vocab.setdefault(t, len(vocab)) for t in dict.fromkeys(tokenize(text)))
                starts.append(len(ids))
            skills.append(len(starts) - 1)
        arrays: dict[str, np.ndarray] = {
            "skills": np.asarray(skills, dtype=np.int64),
            "starts": np.asarray(starts, dtype=np.int64),
            "ids": np.asarray(ids, dtype=np.int32),
        }
        return cls(list(vocab), arrays)

    @classmethod
    def from_arrays(
        cls, terms: list[str], arrays: dict[str, np.ndarray], records: list[SkillRecord]
    ) -> IntentIndex:
        """ValueError unless the arrays describe exactly these records' intents."""
        skills, starts, ids = arrays["skills"], arrays["starts"], arrays["ids"]
        counts = [len(r.intents) for r in records]
        if (
            len(skills) != len(records) + 1
            or len(starts) != int(skills[-1]) + 1
            or int(starts[0]) != 0
            or int(starts[-1]) != len(ids)
            or bool(np.any(np.diff(starts) < 0))
            or np.diff(skills).tolist() != counts
            or (len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(terms)))
        ):
            raise ValueError("inconsistent intent arrays")
        return cls(terms, {"skills": skills, "starts": starts, "ids": ids})

    def to_arrays(self) -> tuple[list[str], dict[str, np.ndarray]]:
        return list(self.term_list), dict(self.arrays)

    def overlap(self, i: int, terms: list[str]) -> list[int]:
        """Positions of record i's intents that share terms with the query: most shared
        terms first, then in the record's order."""
        lo, hi = int(self.skills[i]), int(self.skills[i + 1])
        if self._terms is None:
            self._terms = {t: n for n, t in enumerate(self.term_list)}  # benign race
        query = [n for t in set(terms) if (n := self._terms.get(t)) is not None]
        if lo == hi or not query:
            return []
        bounds = self.starts[lo : hi + 1]
        hit = np.isin(self.ids[int(bounds[0]) : int(bounds[-1])], query)
        shared = np.concatenate(([0], np.cumsum(hit)))
        count = shared[bounds[1:] - bounds[0]] - shared[bounds[:-1] - bounds[0]]
        found = np.flatnonzero(count)
        return [int(n) for n in found[np.argsort(-count[found], kind="stable")]]


def _intents(data: CatalogData) -> tuple[IntentIndex, bool]:
    """(index, reused): from the snapshot's arrays when they fit the records, else built
    (and stored on `data`, which the snapshot then saves)."""
    if data.intent_terms is not None and data.intent_arrays is not None:
        try:
            found = IntentIndex.from_arrays(data.intent_terms, data.intent_arrays, data.records)
            return found, True
        except (KeyError, ValueError, IndexError):
            pass  # damaged or stale: rebuild
    index = IntentIndex.build(data.records)
    data.intent_terms, data.intent_arrays = index.to_arrays()
    return index, False


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
    coverage: float = 0.0  # of the query by the top hit (bm25.evidence)
    unknown: float = 0.0  # of the query by no installed skill at all (bm25.evidence)
    # Hybrid only: where each ranker alone puts the top hit (1 = first; copies count once;
    # None: not hybrid, or that ranker gives it nothing). Their agreement is confidence
    # evidence (confidence.py).
    bm25_rank: int | None = None
    semantic_rank: int | None = None
    wordless: bool = False  # the query has no search terms ("?!?", emoji): see confidence


class Ranker:
    def __init__(
        self, data: CatalogData, bm25_cls: type[BM25Index], trust_weights: dict[str, float]
    ) -> None:
        self.records = data.records
        self.bm25, bm25_reused = _bm25(data, bm25_cls)
        self.intents, intents_reused = _intents(data)
        self.reused = bm25_reused and intents_reused  # both read from the snapshot
        self.semantic = (
            SemanticIndex(data.vectors, data.vector_owner, len(data.records))
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

    # ----------------------------------------------------------------- scoring
    def fuse(self, bm: np.ndarray, sem: np.ndarray) -> np.ndarray:
        top_bm = float(bm.max()) if len(bm) else 0.0
        bm_n = bm / top_bm if top_bm > 0 else bm
        sem_c = np.clip(sem, 0.0, None)
        top_sem = float(sem_c.max()) if len(sem_c) else 0.0
        sem_n = sem_c / top_sem if top_sem > 0 else sem_c
        return HYBRID_ALPHA * sem_n + (1 - HYBRID_ALPHA) * bm_n

    def rank(
        self,
        terms: list[str],
        qvec: np.ndarray | None,
        mode: str,
        floor: int,
        top_k: int,
        lookup: int | None,
    ) -> Ranking:
        n = len(self.records)
        if n == 0:
            return Ranking([], [])
        bm = self.bm25.scores(terms) if mode != "semantic" else np.zeros(n, np.float32)
        sims: np.ndarray | None = None
        sem = np.zeros(n, np.float32)
        if qvec is not None and self.semantic is not None:
            sims = self.semantic.similarities(qvec)
            sem = self.semantic.best_per_skill(sims)
        if mode == "bm25":
            score = bm
        elif mode == "semantic":
            score = np.clip(sem, 0.0, None)
        else:
            score = self.fuse(bm, sem)
        score = score * self.trust
        visible = self.tier >= floor
        relevant = (score > 0) & visible
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
        idx = np.flatnonzero(relevant)
        for i in _descending(score, idx, 4 * top_k + 16):
            if len(hits) >= top_k:
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
        for h in (*hits, *disabled):
            h.matched = self.matched(h.scored, terms, sims)
        ranking = Ranking(hits, disabled, wordless=not terms)
        if hits:
            top = hits[0].scored
            ranking.coverage, ranking.unknown = self.bm25.evidence(terms, top)
            if sims is not None:
                ranking.best_cosine = float(sem[top])
            if sims is not None and mode == "hybrid":  # agreement needs both rankers
                served = visible & self.enabled
                ranking.bm25_rank = self._rank_of(bm * self.trust, top, served)
                sem_side = np.clip(sem, 0.0, None) * self.trust
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
