"""BM25 over skill documents, with postings that make a query cost only its own terms.

Two fields per skill: the header (names, aliases, intents, description, ...) and the body
(what the skill says: section titles, knowledge directives, workflow steps). Each field has
its own length normalisation and document frequencies; a posting's weight is
`header + BODY_WEIGHT * body`, precomputed at build time, so a query is a sum of postings
(10k skills stay well under a millisecond).

idf is Lucene's `log(1 + (N - n + 0.5) / (n + 0.5))`: always positive, so a term found in
every skill of a 1-, 2- or 3-skill catalog still counts (Okapi's `log((N - n + 0.5) /
(n + 0.5))` is zero or negative there, which made small catalogs find nothing).

Query terms missing from the vocabulary are matched to header terms one edit away (typos),
through a deletion index that costs O(length) per term and skips absurd tokens.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

TYPO_WEIGHT = 0.6  # a corrected term counts less than an exact one
TYPO_COVERAGE = 0.5  # a typo-corrected term is half the evidence of an exact one
BODY_EVIDENCE = 0.5  # a term only in the body is half the evidence of one in the header
BODY_WEIGHT = 0.5  # a body match counts half the same match in the header
_MIN_TYPO_LEN = 4
# Longer terms are never typo-corrected: no real word needs it, and the deletion
# neighbourhood of a term is len(term) strings of len(term) - 1 characters (quadratic), so
# this bound is what keeps the index O(length) per term for any input.
MAX_TYPO_LEN = 24


def idf(n_docs: int, df: np.ndarray | int) -> np.ndarray | float:
    """Lucene's BM25 idf (non-negative for every df <= N)."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _typo_ok(term: str) -> bool:
    return _MIN_TYPO_LEN <= len(term) <= MAX_TYPO_LEN


def _field(
    docs: list[list[str]], k1: float, b: float
) -> tuple[dict[str, tuple[list[int], list[float]]], Counter[str]]:
    """term -> (doc ids, BM25 contribution) for one field, and its document frequencies."""
    n = len(docs)
    counts = [Counter(d) for d in docs]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    avgdl = (sum(len(d) for d in docs) / n) if n else 0.0
    out: dict[str, tuple[list[int], list[float]]] = {}
    for i, (doc, c) in enumerate(zip(docs, counts, strict=True)):
        norm = k1 * (1 - b + b * len(doc) / (avgdl or 1.0))
        for term, tf in c.items():
            ids, weights = out.setdefault(term, ([], []))
            ids.append(i)
            weights.append(float(idf(n, df[term])) * tf * (k1 + 1) / (tf + norm))
    return out, df


class BM25Index:
    """Postings as flat arrays (`offsets` into `ids`, `weights`, `header`) and one row per
    term (`terms`: term -> row): what the snapshot stores, memory-mapped when read back. A
    dict of per-term array views cost ~85k Python objects (~5 MB) at 626 skills."""

    def __init__(
        self,
        docs: list[list[str]],
        bodies: list[list[str]] | None = None,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        body_weight: float = BODY_WEIGHT,
    ) -> None:
        self.size = len(docs)
        self._typo: dict[str, tuple[str, ...]] | None = None
        self._typo_terms: set[str] | None = None
        header, header_df = _field(docs, k1, b) if docs else ({}, Counter())
        body = {} if bodies is None or not docs else _field(bodies, k1, b)[0]
        any_df: Counter[str] = Counter()
        for i in range(self.size):
            any_df.update(set(docs[i]) | (set(bodies[i]) if bodies is not None else set()))
        terms = sorted(set(header) | set(body))
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        ids: list[int] = []
        weights: list[float] = []
        in_header: list[bool] = []
        for row, term in enumerate(terms):
            merged: dict[int, float] = {}
            for i, w in zip(*header.get(term, ([], [])), strict=True):
                merged[i] = w
            from_header = set(merged)
            for i, w in zip(*body.get(term, ([], [])), strict=True):
                merged[i] = merged.get(i, 0.0) + body_weight * w
            for i in sorted(merged):
                ids.append(i)
                weights.append(merged[i])
                in_header.append(i in from_header)
            offsets[row + 1] = len(ids)
        self._adopt(
            terms,
            {
                "offsets": offsets,
                "ids": np.asarray(ids, dtype=np.int32),
                "weights": np.asarray(weights, dtype=np.float32),
                "header": np.asarray(in_header, dtype=np.bool_),
                "size": np.asarray([self.size], dtype=np.int64),
                "idf": np.asarray([idf(self.size, any_df[t]) for t in terms], np.float32),
                "typo": np.asarray([t in header_df and _typo_ok(t) for t in terms], np.bool_),
            },
        )

    def _adopt(self, terms: list[str], arrays: dict[str, np.ndarray]) -> None:
        self.terms: dict[str, int] = {t: i for i, t in enumerate(terms)}
        self._arrays = arrays
        self._offsets = arrays["offsets"]
        self._ids = arrays["ids"]
        self._weights = arrays["weights"]
        self._header = arrays["header"]
        self._idf = arrays["idf"]

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(doc ids, contributions, in-header flags) of a known term."""
        row = self.terms.get(term)
        if row is None:
            return None
        lo, hi = int(self._offsets[row]), int(self._offsets[row + 1])
        return self._ids[lo:hi], self._weights[lo:hi], self._header[lo:hi]

    @property
    def typo_terms(self) -> set[str]:
        """Header terms eligible for typo correction (made on the first unknown term)."""
        if self._typo_terms is None:
            flags = self._arrays["typo"]
            self._typo_terms = {t for t, row in self.terms.items() if bool(flags[row])}
        return self._typo_terms

    # Snapshot round trip: the arrays as they are (start-up skips building entirely).
    def to_arrays(self) -> tuple[list[str], dict[str, np.ndarray]]:
        return list(self.terms), dict(self._arrays)

    @classmethod
    def from_arrays(cls, terms: list[str], arrays: dict[str, np.ndarray]) -> BM25Index:
        index = cls([])
        index.size = int(arrays["size"][0])
        offsets, ids, weights = arrays["offsets"], arrays["ids"], arrays["weights"]
        idfs, typo, header = arrays["idf"], arrays["typo"], arrays["header"]
        if (
            len(offsets) != len(terms) + 1
            or len(idfs) != len(terms)
            or len(typo) != len(terms)
            or not int(offsets[-1]) == len(ids) == len(weights) == len(header)
            or (len(offsets) and int(offsets[0]) != 0)
            or (len(offsets) > 1 and bool(np.any(np.diff(offsets) < 0)))
            or (len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= index.size))
        ):
            raise ValueError("inconsistent BM25 arrays")
        index._adopt(terms, dict(arrays))
        if len(index.terms) != len(terms):
            raise ValueError("duplicate BM25 terms")
        return index

    def _typo_index(self) -> dict[str, tuple[str, ...]]:
        if self._typo is None:
            index: dict[str, Any] = {}
            for term in self.typo_terms:
                for d in _deletes(term) | {term}:
                    index.setdefault(d, set()).add(term)
            # Kept as tuples (in place, each set freed as its tuple is made): nearly every key
            # names one or two terms, and a small set costs ~4x a tuple.
            for d, near in index.items():
                index[d] = tuple(near)
            self._typo = index  # benign race: same value from any thread
        return self._typo

    def expand(self, term: str) -> list[tuple[str, float]]:
        """The term itself when known, else header terms one edit away (discounted)."""
        if term in self.terms:
            return [(term, 1.0)]
        if not _typo_ok(term):
            return []
        index = self._typo_index()
        near: set[str] = set(index.get(term, ()))
        for d in _deletes(term):
            near.update(index.get(d, ()))
            if d in self.typo_terms:
                near.add(d)
        return [(t, TYPO_WEIGHT / max(1, len(near))) for t in sorted(near)]

    def scores(self, terms: list[str]) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float32)
        for term, count in Counter(terms).items():
            for match, weight in self.expand(term):
                posting = self._posting(match)
                assert posting is not None  # expand() only names known terms
                ids, contrib, _ = posting
                out[ids] += contrib * (weight * count)
        return out

    def evidence(self, terms: list[str], doc: int) -> tuple[float, float]:
        """(coverage, unknown): how much of the query `doc` says, and how much of it no
        installed skill says at all; both are shares of the query's idf mass.

        coverage: a query term found in the doc's header counts fully, in its body only
        half (as in ranking), typo-corrected half again. unknown: terms no installed skill
        contains ("buttermilk", "vlan"), weighing as much as the rarest possible term, so a
        query about something nobody installed stays low however common its other words
        are. (A typo is unknown too: one-edit neighbours are too easy to find in a large
        vocabulary to count as evidence that the catalog knows the word.)
        """
        top = math.log1p((self.size + 0.5) / 0.5) if self.size else 1.0
        total = found = missing = 0.0
        for term in set(terms):
            matches = self.expand(term)
            row = self.terms.get(term)
            weight = float(self._idf[row]) if row is not None else top
            total += weight
            if row is None:
                missing += weight
            for match, _ in matches:
                posting = self._posting(match)
                assert posting is not None
                ids, _, in_header = posting
                pos = int(np.searchsorted(ids, doc))
                if pos < len(ids) and int(ids[pos]) == doc:
                    share = 1.0 if bool(in_header[pos]) else BODY_EVIDENCE
                    found += weight * share * (1.0 if match == term else TYPO_COVERAGE)
                    break
        return (found / total, missing / total) if total else (0.0, 0.0)
