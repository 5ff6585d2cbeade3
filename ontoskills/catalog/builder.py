"""Shared state while the catalog is built: records, modules, intent vectors, problems."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import OntoskillsError
from ..intents import parse_intents
from ..limits import MAX_INTENTS_PER_SKILL
from ..paths import Home
from ..skillheader import SkillHeader, read_skill_header
from .model import VIEW_INTENTS, CatalogData, SkillRecord, empty_vectors, empty_views
from .schema import build_schema

INTENTS_FILE = "intents.json"
Encode = Callable[[list[str]], np.ndarray]
# Whether stored vectors made by this model (intents.json's `model`, the lock's embedding
# model for install-derived ones) are in the encoder's space (Encoder.reads_published_vectors)
StoredOk = Callable[[str | None], bool]


@dataclass
class Vectors:
    rows: list[np.ndarray] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    seen: set[tuple[int, str]] = field(default_factory=set)
    model: str | None = None
    dim: int | None = None
    derived: int = 0
    # The intents cap (limits.MAX_INTENTS_PER_SKILL) on vectors, consistent with the text
    # intents: a skill whose text intents were cut keeps vectors only for the kept ones,
    # and no skill gets more intent vectors than the cap (its description vector aside).
    kept: dict[int, set[str]] = field(default_factory=dict)  # owner -> kept intents, if cut
    count: Counter[int] = field(default_factory=Counter)  # intent vectors per owner
    cut: set[int] = field(default_factory=set)  # owners that lost vectors to the cap

    def admits(self, owner: int, text: str) -> bool:
        kept = self.kept.get(owner)
        return (kept is None or text in kept) and self.count[owner] < MAX_INTENTS_PER_SKILL

    def add(self, owner: int, text: str, vec: np.ndarray, *, intent: bool = True) -> bool:
        if (owner, text) in self.seen:
            return False
        if intent:
            if not self.admits(owner, text):
                self.cut.add(owner)
                return False
            self.count[owner] += 1
        self.seen.add((owner, text))
        self.rows.append(np.asarray(vec, dtype=np.float32))
        self.owner.append(owner)
        self.text.append(text)
        return True


@dataclass
class ModuleRef:
    path: str  # relative to the record root
    header: SkillHeader
    owner: int  # index into records
    has_vectors: bool = False


class Builder:
    def __init__(
        self, home: Home, encode: Encode | None, stored_ok: StoredOk | None = None
    ) -> None:
        self.home = home
        self.encode = encode
        # None: every stored vector is used (no encoder, or the model they were made with)
        self.stored_ok = stored_ok
        self.records: list[SkillRecord] = []
        self.modules: list[ModuleRef] = []
        self.vectors = Vectors()
        self.problems: list[str] = []
        self.usage: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
        self.keys: set[str] = set()

    # --------------------------------------------------------------------- helpers
    def header(self, path: Path, label: str) -> SkillHeader | None:
        """The module's skill header (None: no skill node, or a problem recorded)."""
        try:
            return read_skill_header(path.read_bytes(), label, lenient=True, usage=self.usage)
        except (OSError, OntoskillsError) as exc:
            self.problems.append(f"{label}: {exc}")
            return None

    def add_intents_file(
        self, path: Path, label: str, folder_modules: list[ModuleRef], fallback: int | None
    ) -> None:
        try:
            parsed = parse_intents(path.read_bytes(), source=label)
        except (OSError, OntoskillsError) as exc:
            self.problems.append(f"{label}: {exc}")
            return
        if self.stored_ok is not None and not self.stored_ok(parsed.model):
            return  # another model's vectors: this encoder derives its own for the module
        if self.vectors.dim is None:
            self.vectors.dim, self.vectors.model = parsed.dimension, parsed.model
        elif parsed.dimension != self.vectors.dim:
            self.problems.append(
                f"{label}: {parsed.dimension}-dim vectors, others are {self.vectors.dim}; ignored"
            )
            return
        by_name: dict[str, ModuleRef] = {}
        for m in folder_modules:
            by_name.setdefault(m.header.identifier, m)
            by_name.setdefault(self.records[m.owner].skill_id, m)
        for iv in parsed.intents:
            targets = [by_name[s] for s in iv.skills if s in by_name]
            if targets:
                for m in targets:
                    m.has_vectors = True
                    self.vectors.add(m.owner, iv.intent, np.asarray(iv.embedding))
            elif fallback is not None:
                self.vectors.add(fallback, iv.intent, np.asarray(iv.embedding))

    def derive_missing_vectors(self) -> None:
        """Quirk 6: encode the intents of modules that have no stored vectors (within the
        intents cap: nothing is encoded that `Vectors.add` would refuse)."""
        if self.encode is None:
            return
        todo: list[tuple[int, str]] = []
        room = Counter(self.vectors.count)
        for m in self.modules:
            if not m.has_vectors:
                texts = list(m.header.intents)
                if m.path == self.records[m.owner].main_module:
                    texts += self.records[m.owner].intents
                for t in dict.fromkeys(texts):
                    pair = (m.owner, t)
                    if (
                        pair not in self.vectors.seen
                        and self.vectors.admits(m.owner, t)
                        and room[m.owner] < MAX_INTENTS_PER_SKILL
                    ):
                        room[m.owner] += 1
                        todo.append(pair)
        described = self.description_texts()
        descriptions = set(described)
        todo += [p for p in described if p not in self.vectors.seen]
        if not todo:
            return
        encoded = self.encode([t for _, t in todo])
        if self.vectors.dim is not None and encoded.shape[1] != self.vectors.dim:
            self.problems.append(
                f"the encoder makes {encoded.shape[1]}-dim vectors but stored ones are "
                f"{self.vectors.dim}-dim; missing vectors not derived"
            )
            return
        self.vectors.dim = encoded.shape[1]
        for (owner, text), vec in zip(todo, encoded, strict=True):
            intent = (owner, text) not in descriptions
            self.vectors.derived += self.vectors.add(owner, text, vec, intent=intent)

    def description_texts(self) -> list[tuple[int, str]]:
        """Every skill also gets a vector for its description (its name in words when it has
        none): authors write descriptions as "use when ..." triggers, the closest thing to
        a query a skill has, and skills whose intents are missing or thin need one."""
        out: list[tuple[int, str]] = []
        for i, r in enumerate(self.records):
            if text := r.summary_text:
                out.append((i, text))
        return out

    def cap_intents(self, idx: int) -> None:
        """Bound a skill's intents (limits.MAX_INTENTS_PER_SKILL, docs/SEARCH.md) once its
        modules are merged and before its vectors are read: every search that ranks a skill
        walks its intents, and 100,000 of them made each such search take seconds. One
        problem line per skill cut, never one per intent."""
        rec = self.records[idx]
        if len(rec.intents) <= MAX_INTENTS_PER_SKILL:
            return
        # Problems are shown as "not served: ...": this reads as the part that is not.
        self.problems.append(
            f"{rec.key}: {len(rec.intents) - MAX_INTENTS_PER_SKILL} of its {len(rec.intents)} "
            f"intents (a skill's first {MAX_INTENTS_PER_SKILL} are indexed)"
        )
        rec.intents = rec.intents[:MAX_INTENTS_PER_SKILL]
        self.vectors.kept[idx] = set(rec.intents)

    def new_record(self, rec: SkillRecord) -> int | None:
        if rec.key in self.keys:
            self.problems.append(f"{rec.key}: defined twice; the second one is ignored")
            return None
        self.keys.add(rec.key)
        self.records.append(rec)
        return len(self.records) - 1

    def finish(self) -> CatalogData:
        self.derive_missing_vectors()
        for cut in sorted(self.vectors.cut - set(self.vectors.kept)):
            self.problems.append(
                f"{self.records[cut].key}: intent vectors past its first "
                f"{MAX_INTENTS_PER_SKILL} (a skill's first {MAX_INTENTS_PER_SKILL} are indexed)"
            )
        if self.vectors.rows:
            vectors = np.vstack(self.vectors.rows).astype(np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors /= np.clip(norms, 1e-12, None)
            owner = np.asarray(self.vectors.owner, dtype=np.int32)
        else:
            vectors, owner = empty_vectors()
        views = self.derive_views()
        bodies: list[dict[str, list[str]]] = [{} for _ in self.records]
        for m in self.modules:
            for kind, texts in m.header.body.items():
                bodies[m.owner].setdefault(kind, []).extend(texts)
        return CatalogData(
            bodies=bodies,
            records=self.records,
            vectors=vectors,
            vector_owner=owner,
            vector_text=self.vectors.text,
            vector_model=self.vectors.model,
            problems=self.problems,
            schema=build_schema(*self.usage),
            derived_vectors=self.vectors.derived,
            views=views,
        )

    def derive_views(self) -> np.ndarray:
        """Every skill read whole (SkillRecord.view_texts), encoded by the query's encoder:
        never stored by a registry, so always this model's space. Through the same
        per-model cache as derived intents: one encode per text and model, ever."""
        if self.encode is None or not self.records:
            return empty_views()
        texts = [t for r in self.records for t in r.view_texts]
        encoded = np.asarray(self.encode(texts), dtype=np.float32)
        if encoded.ndim != 2 or (
            self.vectors.dim is not None and encoded.shape[1] != self.vectors.dim
        ):
            return empty_views()  # a mismatch is already reported by derive_missing_vectors
        encoded /= np.clip(np.linalg.norm(encoded, axis=1, keepdims=True), 1e-12, None)
        return encoded.reshape(len(self.records), len(VIEW_INTENTS), encoded.shape[1])


def merge(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys(x for x in [*a, *b] if x))


_YAML_MARKERS = (">", "|", ">-", "|-")


def description_of(manifest_desc: str, turtle_desc: str, differentia: str = "") -> str:
    """The manifest's description, unless it is cut ("...", or the Turtle's is longer and
    starts with it: manifests cut at an escaped quote end in a lone backslash) or a bare
    YAML block marker (">"): then the Turtle's. When both are empty, the compiler's
    one-line `oc:differentia` ("that creates CVs from YAML" -> "Creates CVs from YAML")."""
    d = manifest_desc.strip()
    t = "" if turtle_desc.strip() in _YAML_MARKERS else turtle_desc.strip()
    stem = d.rstrip(".\\… ").strip()  # cut descriptions end in "...", "…" or a lone "\"
    cut = d.endswith(("...", "…")) and len(t) > len(d) - 3
    if not d or d in _YAML_MARKERS or cut or (len(t) > len(d) and t.startswith(stem)):
        d = t or ("" if d in _YAML_MARKERS else d)
    if not d and differentia.strip():
        text = differentia.strip().removeprefix("that ").removeprefix("which ")
        d = text[:1].upper() + text[1:]
    return d


def folder_of(path: str) -> str:
    parent = PurePosixPath(path).parent.as_posix()
    return "" if parent == "." else parent
