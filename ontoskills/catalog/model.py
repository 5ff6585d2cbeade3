"""What the catalog knows about each installed skill (small, JSON-serialisable)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

SUMMARY_WORDS = 32
# The two whole-skill texts each skill also gets a vector for (search/semantic.py "views"):
# how many intents each joins, and a bound on the text (the encoder truncates anyway).
VIEW_INTENTS = (12, 6)
VIEW_CHARS = 1200
_NAME_SPLIT = re.compile(r"[-_./\s]+|(?<=[a-z0-9])(?=[A-Z])")  # kebab/snake/camel -> words


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
    # Installed but switched off (lock flag or default_enabled: false): indexed so search can
    # say "this would match, enable it", never served (context, lookup, results).
    enabled: bool = True
    content_hash: str = ""  # oc:contentHash of the main module: copies share it
    differentia: str = ""  # oc:differentia of the main module (a one-line summary)

    @property
    def summary_text(self) -> str:
        """What the description vector encodes: the description's first SUMMARY_WORDS words
        (where "use when ..." triggers are; encoding is ~2x cheaper than whole descriptions
        and ranks the same on both dev sets), else the name in words."""
        if self.description:
            return " ".join(self.description.split()[:SUMMARY_WORDS])
        return " ".join(_NAME_SPLIT.split(self.name or self.skill_id)).strip()

    @property
    def view_texts(self) -> tuple[str, str]:
        """The skill read whole, in two texts the encoder embeds next to its single intents
        (issue 26): its intents joined (what it is for, in every phrasing its author gave:
        a paraphrase that matches no one intent often matches their sum), and its name,
        description and first intents (what it is). Chosen on the dev sets, docs/SEARCH.md."""
        name = self.name or self.skill_id.replace("-", " ")
        bag = ". ".join(self.intents[: VIEW_INTENTS[0]]) or self.description or name
        about = f"{name}: {self.description} " + ". ".join(self.intents[: VIEW_INTENTS[1]])
        return bag[:VIEW_CHARS], about.strip()[:VIEW_CHARS]

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
    # Whole-skill vectors (SkillRecord.view_texts), float32 [n_records, 2, dim], encoded by
    # the query's own encoder; shape (0, 2, 0) without an encoder (search then fuses as before).
    views: np.ndarray = field(default_factory=lambda: empty_views())
    # The BM25 postings (terms + flat arrays, see search/bm25.py), computed once at build
    # time and kept in the snapshot: tokenizing and indexing every skill dominated start-up.
    bm25_terms: list[str] | None = None
    bm25_arrays: dict[str, np.ndarray] | None = None
    # Each record's intents as term ids (search/ranking.IntentIndex): tokenized once at build
    # time and kept in the snapshot, so no search tokenizes an intent.
    intent_terms: list[str] | None = None
    intent_arrays: dict[str, np.ndarray] | None = None
    # Body text per record ("say" / "prose" -> texts), only while building: the snapshot
    # keeps the postings made from it, not the text.
    bodies: list[dict[str, list[str]]] | None = None

    @property
    def has_vectors(self) -> bool:
        return self.vectors.shape[0] > 0


def empty_views() -> np.ndarray:
    return np.zeros((0, len(VIEW_INTENTS), 0), dtype=np.float32)


def empty_vectors() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int32)
