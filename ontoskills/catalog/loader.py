"""Build the catalog from the installed tree: lock packages (verified) + local skills.

Quirks handled (../shared/ontostore/QUIRKS.md): keys are author/pkg/skill (4), three names per
skill (5), intents.json mapped by folder + identifier (5, 6), skillsbench has Turtle-only
intents (8), skill paths at the package root or nested (9), aliases only in Turtle (10),
descriptions cut to "..." or ">" (10), one parse per module (11).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import OntoskillsError
from ..lockfile import LockedPackage, Lockfile
from ..manifest import LOCAL_TIER, Manifest, SkillEntry, parse_intents, parse_manifest
from ..paths import Home
from ..safety import is_valid_name
from .model import CatalogData, SkillRecord, empty_vectors
from .schema import build_schema
from .turtle import ModuleHeader, read_header
from .verify import Verification

INTENTS_FILE = "intents.json"
SKIP_TOP = ("author", "system")
Encode = Callable[[list[str]], np.ndarray]


@dataclass
class _Vectors:
    rows: list[np.ndarray] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    seen: set[tuple[int, str]] = field(default_factory=set)
    model: str | None = None
    dim: int | None = None
    derived: int = 0

    def add(self, owner: int, text: str, vec: np.ndarray) -> bool:
        if (owner, text) in self.seen:
            return False
        self.seen.add((owner, text))
        self.rows.append(np.asarray(vec, dtype=np.float32))
        self.owner.append(owner)
        self.text.append(text)
        return True


@dataclass
class _Module:
    path: str  # relative to the record root
    header: ModuleHeader
    owner: int  # index into records
    has_vectors: bool = False


class _Builder:
    def __init__(self, home: Home, encode: Encode | None) -> None:
        self.home = home
        self.encode = encode
        self.records: list[SkillRecord] = []
        self.modules: list[_Module] = []
        self.vectors = _Vectors()
        self.problems: list[str] = []
        self.usage: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
        self.keys: set[str] = set()

    # --------------------------------------------------------------------- helpers
    def header(self, path: Path, label: str) -> ModuleHeader | None:
        try:
            return read_header(path, usage=self.usage)
        except (OSError, OntoskillsError) as exc:
            self.problems.append(f"{label}: {exc}")
            return None

    def add_intents_file(
        self, path: Path, label: str, folder_modules: list[_Module], fallback: int | None
    ) -> None:
        try:
            parsed = parse_intents(path.read_bytes(), source=label)
        except (OSError, OntoskillsError) as exc:
            self.problems.append(f"{label}: {exc}")
            return
        if self.vectors.dim is None:
            self.vectors.dim, self.vectors.model = parsed.dimension, parsed.model
        elif parsed.dimension != self.vectors.dim:
            self.problems.append(
                f"{label}: {parsed.dimension}-dim vectors, others are {self.vectors.dim}; ignored"
            )
            return
        by_name: dict[str, _Module] = {}
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
        """Quirk 6: encode the intents of modules that have no stored vectors."""
        if self.encode is None:
            return
        todo: list[tuple[int, str]] = []
        for m in self.modules:
            if not m.has_vectors:
                texts = list(m.header.intents)
                if m.path == self.records[m.owner].main_module:
                    texts += self.records[m.owner].intents
                todo.extend((m.owner, t) for t in dict.fromkeys(texts))
        todo = [(o, t) for o, t in todo if (o, t) not in self.vectors.seen]
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
            self.vectors.derived += self.vectors.add(owner, text, vec)

    def new_record(self, rec: SkillRecord) -> int | None:
        if rec.key in self.keys:
            self.problems.append(f"{rec.key}: defined twice; the second one is ignored")
            return None
        self.keys.add(rec.key)
        self.records.append(rec)
        return len(self.records) - 1

    def finish(self) -> CatalogData:
        self.derive_missing_vectors()
        if self.vectors.rows:
            vectors = np.vstack(self.vectors.rows).astype(np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors /= np.clip(norms, 1e-12, None)
            owner = np.asarray(self.vectors.owner, dtype=np.int32)
        else:
            vectors, owner = empty_vectors()
        return CatalogData(
            records=self.records,
            vectors=vectors,
            vector_owner=owner,
            vector_text=self.vectors.text,
            vector_model=self.vectors.model,
            problems=self.problems,
            schema=build_schema(*self.usage),
            derived_vectors=self.vectors.derived,
        )


def _merge(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys(x for x in [*a, *b] if x))


def _description(manifest_desc: str, turtle_desc: str) -> str:
    d = manifest_desc.strip()
    if not d or d == ">" or (d.endswith("...") and len(turtle_desc) > len(d) - 3):
        return turtle_desc or ("" if d == ">" else d)
    return d


def _folder(path: str) -> str:
    parent = PurePosixPath(path).parent.as_posix()
    return "" if parent == "." else parent


def _within(path: str, folder: str) -> bool:
    return folder == "" or path.startswith(folder + "/")


# ------------------------------------------------------------------------- packages


def _add_package(b: _Builder, pkg: LockedPackage, verification: Verification) -> None:
    pid = pkg.id
    root = b.home.package_dir(pid)
    if not verification.ok(pid, "package.json") or pkg.file("package.json") is None:
        b.problems.append(f"{pid}: package.json failed verification; package not served")
        return
    try:
        manifest: Manifest = parse_manifest(
            (root / "package.json").read_bytes(), source=f"{pid}/package.json", expected_id=pid
        )
    except (OSError, OntoskillsError) as exc:
        b.problems.append(f"{pid}: {exc}; package not served")
        return
    good = [f.path for f in pkg.files if verification.ok(pid, f.path)]
    ttl = sorted(p for p in good if p.endswith(".ttl"))
    headers = {p: h for p in ttl if (h := b.header(root / p, f"{pid}/{p}")) is not None}
    skill_of: dict[str, int] = {}  # module path -> record index
    iri_of: dict[str, int] = {}
    entries: list[tuple[SkillEntry, int]] = []
    for s in manifest.skills:
        if not pkg.skills.get(s.id, s.default_enabled):
            continue  # disabled skills are not served
        head = headers.get(s.path)
        if head is None:
            b.problems.append(f"{pid}/{s.id}: main module {s.path} unavailable; skill not served")
            continue
        idx = b.new_record(
            SkillRecord(
                key=f"{pid}/{s.id}",
                package=pid,
                skill_id=s.id,
                identifier=head.identifier or s.id,
                iri=head.iri,
                trust_tier=pkg.trust_tier,
                root=str(root),
                main_module=s.path,
                description=_description(s.description, head.description),
                category=s.category or head.category,
                nature=head.nature,
                name=head.name or s.id,
                aliases=_merge(list(s.aliases), head.aliases),
                intents=_merge(list(s.intents), head.intents),
                depends_on=list(s.depends_on),
            )
        )
        if idx is not None:
            skill_of[s.path] = idx
            iri_of[head.iri] = idx
            entries.append((s, idx))
    # Sub-modules: oc:extends names the parent; otherwise the deepest skill folder holding it.
    by_depth = sorted(entries, key=lambda e: -len(e[0].dir))
    for path, head in headers.items():
        owner = skill_of.get(path)
        if owner is None:
            owner = iri_of.get(head.extends)
        if owner is None:
            owner = next((i for s, i in by_depth if _within(path, s.dir)), None)
        if owner is None:
            continue
        if path != b.records[owner].main_module:
            rec = b.records[owner]
            rec.modules.append(path)
            rec.aliases = _merge(rec.aliases, head.aliases)
            rec.intents = _merge(rec.intents, head.intents)
        b.modules.append(_Module(path, head, owner))
    for _, idx in entries:
        rec = b.records[idx]
        rec.modules.insert(0, rec.main_module)
        folder = _folder(rec.main_module)
        rec.assets = [
            p
            for p in good
            if _within(p, folder)
            and not p.endswith(".ttl")
            and PurePosixPath(p).name not in (INTENTS_FILE, "package.json")
        ]
    for path in good:
        if PurePosixPath(path).name != INTENTS_FILE:
            continue
        folder = _folder(path)
        in_folder = [
            m for m in b.modules if b.records[m.owner].package == pid and _folder(m.path) == folder
        ]
        fallback = next((i for s, i in by_depth if _within(path, s.dir)), None)
        b.add_intents_file(root / path, f"{pid}/{path}", in_folder, fallback)


# ------------------------------------------------------------------------- local skills


def local_skill_files(home: Home) -> list[Path]:
    """Every file under ontologies/ outside author/ and system/ (sorted, no symlinks)."""
    out: list[Path] = []
    top = home.ontologies
    if not top.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        if Path(dirpath) == top:
            dirnames[:] = [d for d in dirnames if d not in SKIP_TOP]
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out.append(p)
    return out


def _add_local(b: _Builder, files: list[Path]) -> None:
    top = b.home.ontologies
    mains = [p for p in files if p.name == "ontoskill.ttl" and p.parent != top]
    main_dirs = {p.parent for p in mains}
    for main in mains:
        folder = main.parent
        rel = folder.relative_to(top)
        group = rel.parts[0]
        label = f"local/{rel.as_posix()}/ontoskill.ttl"
        head = b.header(main, label)
        if head is None:
            continue
        skill = head.identifier if is_valid_name(head.identifier) else folder.name
        if not (is_valid_name(group) and is_valid_name(skill)):
            b.problems.append(f"{label}: folder or identifier is not a valid name; not served")
            continue
        # Files of this skill: below its folder but not inside a nested local skill.
        mine = [
            p
            for p in files
            if folder in p.parents
            and not any(d in main_dirs for d in p.parents if folder in d.parents)
        ]
        idx = b.new_record(
            SkillRecord(
                key=f"local/{group}/{skill}",
                package=f"local/{group}",
                skill_id=skill,
                identifier=head.identifier or skill,
                iri=head.iri,
                trust_tier=LOCAL_TIER,
                root=str(folder),
                main_module="ontoskill.ttl",
                description=head.description,
                category=head.category,
                nature=head.nature,
                name=head.name or skill,
                aliases=head.aliases,
                intents=head.intents,
                modules=["ontoskill.ttl"],
            )
        )
        if idx is None:
            continue
        rec = b.records[idx]
        modules = [_Module("ontoskill.ttl", head, idx)]
        for p in mine:
            relp = p.relative_to(folder).as_posix()
            if p.suffix == ".ttl" and p != main and p.parent == folder:
                sub = b.header(p, f"local/{rel.as_posix()}/{relp}")
                if sub is not None:
                    rec.modules.append(relp)
                    rec.aliases = _merge(rec.aliases, sub.aliases)
                    rec.intents = _merge(rec.intents, sub.intents)
                    modules.append(_Module(relp, sub, idx))
            elif p.suffix != ".ttl" and p.name != INTENTS_FILE:
                rec.assets.append(relp)
        b.modules.extend(modules)
        if (folder / INTENTS_FILE).is_file():
            b.add_intents_file(
                folder / INTENTS_FILE, f"local/{rel.as_posix()}/{INTENTS_FILE}", modules, idx
            )


def build_catalog(
    home: Home,
    lock: Lockfile,
    verification: Verification,
    *,
    local_files: list[Path] | None = None,
    encode: Encode | None = None,
) -> CatalogData:
    b = _Builder(home, encode)
    b.problems.extend(verification.problems)
    for pid in sorted(lock.packages):
        _add_package(b, lock.packages[pid], verification)
    _add_local(b, local_files if local_files is not None else local_skill_files(home))
    return b.finish()
