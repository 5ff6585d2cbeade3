"""What the catalog knows about each served skill (small, JSON-serialisable)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class SkillRecord:
    key: str  # author/pkg/skill (local skills: local/<folder>/<skill>)
    package: str  # author/pkg, or local/<folder>
    skill_id: str  # manifest id (local: dcterms:identifier or folder name)
    identifier: str  # dcterms:identifier of the main module
    iri: str  # subject IRI of the main module
    trust_tier: str
    root: str  # absolute folder of the package (local: the skill folder)
    main_module: str  # path of the main module relative to root
    description: str = ""
    category: str = ""
    nature: str = ""
    name: str = ""
    aliases: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)  # verified modules, main first
    depends_on: list[str] = field(default_factory=list)
    assets: list[str] = field(default_factory=list)  # verified non-Turtle files of the skill

    @property
    def short_id(self) -> str:
        return self.key.rsplit("/", 1)[1]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SkillRecord:
        return cls(**data)


@dataclass
class CatalogData:
    """Everything search needs, as built from the tree or read back from the snapshot."""

    records: list[SkillRecord]
    # Intent vectors: row i belongs to records[vector_owner[i]] with text vector_text[i].
    vectors: np.ndarray  # float32 [n, dim]; shape (0, 0) when there are none
    vector_owner: np.ndarray  # int32 [n]
    vector_text: list[str]
    vector_model: str | None
    problems: list[str]
    schema: dict[str, Any]
    derived_vectors: int = 0  # how many rows were encoded by us (modules without vectors)
    # The BM25 postings (terms + flat arrays, see search/bm25.py), computed once at build
    # time and kept in the snapshot: tokenizing and indexing every skill dominated start-up.
    bm25_terms: list[str] | None = None
    bm25_arrays: dict[str, np.ndarray] | None = None

    @property
    def has_vectors(self) -> bool:
        return self.vectors.shape[0] > 0


def empty_vectors() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int32)
