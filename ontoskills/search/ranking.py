"""Scoring: BM25 documents per skill, semantic best-intent, hybrid fusion, trust weighting."""

from __future__ import annotations

import numpy as np

from ..catalog.model import CatalogData, SkillRecord
from ..manifest import tier_rank
from .bm25 import BM25Index
from .semantic import SemanticIndex
from .tokenize import tokenize

# Field weights: each field's terms are repeated this many times in the skill's document.
FIELD_WEIGHTS = {
    "id": 3,
    "aliases": 2,
    "intents": 1,
    "description": 1,
    "category": 1,
    "nature": 1,
    "package": 1,
}
HYBRID_ALPHA = 0.6  # weight of the semantic side in the fused score
MAX_MATCHED_INTENTS = 3


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


def _bm25(data: CatalogData, bm25_cls: type[BM25Index]) -> BM25Index:
    """From the snapshot's arrays when they fit, else built (and stored on `data`)."""
    if data.bm25_terms is not None and data.bm25_arrays is not None:
        try:
            index = bm25_cls.from_arrays(data.bm25_terms, data.bm25_arrays)
            if index.size == len(data.records):
                return index
        except (KeyError, ValueError, IndexError):
            pass  # damaged or stale: rebuild
    index = bm25_cls([skill_document(r) for r in data.records])
    data.bm25_terms, data.bm25_arrays = index.to_arrays()
    return index


class Ranker:
    def __init__(
        self, data: CatalogData, bm25_cls: type[BM25Index], trust_weights: dict[str, float]
    ) -> None:
        self.records = data.records
        self.bm25 = _bm25(data, bm25_cls)
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
        self._intent_terms: dict[int, list[tuple[str, set[str]]]] = {}  # filled on demand

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
    ) -> list[tuple[int, float, list[str]]]:
        n = len(self.records)
        if n == 0:
            return []
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
        relevant = score > 0
        relevant &= self.tier >= floor
        if lookup is not None:
            relevant[lookup] = False
        idx = np.flatnonzero(relevant)
        k = top_k - (1 if lookup is not None else 0)
        order = idx[np.argsort(-score[idx], kind="stable")][: max(k, 0)]
        out: list[tuple[int, float, list[str]]] = []
        if lookup is not None:
            best = float(score.max()) if len(score) else 0.0
            out.append(
                (lookup, max(best, float(score[lookup]), 1e-6), self.matched(lookup, terms, sims))
            )
        for i in order:
            out.append((int(i), float(score[i]), self.matched(int(i), terms, sims)))
        return out

    def intent_terms(self, i: int) -> list[tuple[str, set[str]]]:
        terms = self._intent_terms.get(i)
        if terms is None:
            terms = [(text, set(tokenize(text))) for text in self.records[i].intents]
            self._intent_terms[i] = terms  # benign race: same value from any thread
        return terms

    def matched(self, i: int, terms: list[str], sims: np.ndarray | None) -> list[str]:
        found: list[str] = []
        if sims is not None and self.semantic is not None:
            found.extend(self.vector_text[r] for r in self.semantic.top_rows(sims, i))
        query = set(terms)
        overlap = sorted(
            (
                (len(query & toks), n, text)
                for n, (text, toks) in enumerate(self.intent_terms(i))
                if query & toks
            ),
            key=lambda t: (-t[0], t[1]),
        )
        found.extend(text for _, _, text in overlap)
        return list(dict.fromkeys(found))[:MAX_MATCHED_INTENTS]
