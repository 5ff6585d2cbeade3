"""BM25 over skill documents: rank-bm25 computes the statistics, postings make queries cheap.

rank-bm25's own `get_scores` walks every document for every query term (O(N) Python per
term); we keep its idf/length model but precompute each posting's contribution, so a query
costs only the postings of its terms (10k skills stay well under a few milliseconds).
Query terms missing from the vocabulary are matched to terms one edit away (typos).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from rank_bm25 import BM25Okapi

TYPO_WEIGHT = 0.6  # a corrected term counts less than an exact one
_MIN_TYPO_LEN = 4


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class BM25Index:
    def __init__(self, docs: list[list[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.size = len(docs)
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._typo: dict[str, set[str]] | None = None
        if not docs or not any(docs):
            return
        model = BM25Okapi(docs, k1=k1, b=b)
        lengths = np.asarray(model.doc_len, dtype=np.float64)
        norm = k1 * (1 - b + b * lengths / (model.avgdl or 1.0))
        by_term: dict[str, tuple[list[int], list[float]]] = {}
        for i, freqs in enumerate(model.doc_freqs):
            for term, tf in freqs.items():
                ids, tfs = by_term.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        for term, (ids, tfs) in by_term.items():
            arr = np.asarray(ids, dtype=np.int32)
            tf = np.asarray(tfs, dtype=np.float64)
            weight = model.idf[term] * tf * (k1 + 1) / (tf + norm[arr])
            self.postings[term] = (arr, weight.astype(np.float32))

    # Snapshot round trip: the postings as flat arrays (start-up skips rank-bm25 entirely).
    def to_arrays(self) -> tuple[list[str], dict[str, np.ndarray]]:
        terms = sorted(self.postings)
        lengths = [len(self.postings[t][0]) for t in terms]
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        empty_i, empty_w = np.zeros(0, np.int32), np.zeros(0, np.float32)
        ids = np.concatenate([self.postings[t][0] for t in terms]) if terms else empty_i
        weights = np.concatenate([self.postings[t][1] for t in terms]) if terms else empty_w
        arrays = {
            "offsets": offsets,
            "ids": ids,
            "weights": weights,
            "size": np.asarray([self.size], dtype=np.int64),
        }
        return terms, arrays

    @classmethod
    def from_arrays(cls, terms: list[str], arrays: dict[str, np.ndarray]) -> BM25Index:
        index = cls([])
        index.size = int(arrays["size"][0])
        offsets, ids, weights = arrays["offsets"], arrays["ids"], arrays["weights"]
        if len(offsets) != len(terms) + 1 or not int(offsets[-1]) == len(ids) == len(weights):
            raise ValueError("inconsistent BM25 arrays")
        for i, term in enumerate(terms):
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            index.postings[term] = (ids[lo:hi], weights[lo:hi])
        return index

    def _typo_index(self) -> dict[str, set[str]]:
        if self._typo is None:
            index: dict[str, set[str]] = {}
            for term in self.postings:
                if len(term) >= _MIN_TYPO_LEN:
                    for d in _deletes(term) | {term}:
                        index.setdefault(d, set()).add(term)
            self._typo = index
        return self._typo

    def expand(self, term: str) -> list[tuple[str, float]]:
        """The term itself when known, else vocabulary terms one edit away (discounted)."""
        if term in self.postings:
            return [(term, 1.0)]
        if len(term) < _MIN_TYPO_LEN:
            return []
        index = self._typo_index()
        near: set[str] = set(index.get(term, ()))
        for d in _deletes(term):
            near |= index.get(d, set())
            if d in self.postings and len(d) >= _MIN_TYPO_LEN:
                near.add(d)
        return [(t, TYPO_WEIGHT / max(1, len(near))) for t in sorted(near)]

    def scores(self, terms: list[str]) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float32)
        for term, count in Counter(terms).items():
            for match, weight in self.expand(term):
                ids, contrib = self.postings[match]
                out[ids] += contrib * (weight * count)
        return out
