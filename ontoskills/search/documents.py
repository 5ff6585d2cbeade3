"""What is indexed for BM25: each skill's header document (weighted fields) and body document,
and the index built from them or read back from a snapshot's arrays."""

from __future__ import annotations

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
