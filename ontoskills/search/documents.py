"""What is indexed per skill: the BM25 header document (weighted fields) and body document, and
each skill's intents as term ids (`IntentIndex`); each index built from the records or read back
from a snapshot's arrays."""

from __future__ import annotations

import numpy as np

from ..catalog.model import CatalogData, SkillRecord
from .bm25 import BM25Index
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


def build_bm25(data: CatalogData, bm25_cls: type[BM25Index]) -> tuple[BM25Index, bool]:
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


def build_intents(data: CatalogData) -> tuple[IntentIndex, bool]:
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
