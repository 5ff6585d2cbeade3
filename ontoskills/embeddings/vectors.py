"""Intent vectors of an installed package: the registry's stored ones plus those we derived.

A folder's intents.json covers only one of its modules (QUIRKS 6), tagging each intent with
the module's `dcterms:identifier`. We map intents to modules by folder + identifier, and
compute vectors for every module whose `oc:resolvesIntent` values have none ("derived"). Those
live in `state/derived/vectors/<author>/<pkg>.npz`, never among the verified package files.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import jsonio
from ..errors import OntoskillsError
from ..fsutil import atomic_write_bytes, walk_files
from ..intents import parse_intents
from ..manifest import Manifest, parse_manifest
from ..paths import Home
from ..skillheader import read_skill_header

INTENTS_FILE = "intents.json"
DERIVED_VERSION = 1


@dataclass
class IntentVector:
    skill: str  # manifest skill id the module belongs to ("" for a package-level module)
    module: str  # module path relative to the package root
    intent: str
    vector: np.ndarray  # float32, L2-normalised
    derived: bool


@dataclass(frozen=True)
class ModuleInfo:
    module: str
    identifier: str
    intents: tuple[str, ...]
    skill: str = ""

    @property
    def folder(self) -> str:
        return self.module.rsplit("/", 1)[0] if "/" in self.module else ""


# ------------------------------------------------------------------------- Turtle modules
def read_module(path: Path, relpath: str) -> ModuleInfo | None:
    """identifier + intents of the module's skill, read as the catalog reads it
    (skillheader.py); None when it has no skill node or no identifier, or does not parse."""
    try:
        head = read_skill_header(path.read_bytes(), relpath, lenient=True)
    except (OSError, OntoskillsError):
        return None  # doctor/verify report unparsable modules; vectors skip them
    if head is None or not head.identifier:
        return None
    return ModuleInfo(relpath, head.identifier, tuple(head.intents))


def read_manifest(pkg_dir: Path) -> Manifest | None:
    path = pkg_dir / "package.json"
    if not path.is_file():
        return None
    try:
        return parse_manifest(path.read_bytes(), source=str(path))
    except OntoskillsError:
        return None


def read_modules(root: Path, manifest: Manifest | None = None) -> list[ModuleInfo]:
    """Every Turtle module under root with its identifier, intents and owning skill."""
    out = []
    for rel in walk_files(root):
        if rel.endswith(".ttl"):
            info = read_module(root / rel, rel)
            if info is not None:
                owner = manifest.owner_of(rel) if manifest is not None else None
                skill = owner.id if owner is not None else ""
                out.append(ModuleInfo(info.module, info.identifier, info.intents, skill))
    return out


# ------------------------------------------------------------------------ stored vectors
def _normalised(values: tuple[float, ...] | list[float]) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def stored_vectors(root: Path, modules: list[ModuleInfo]) -> list[IntentVector]:
    """Vectors from every intents.json under root, attributed to modules by folder + id."""
    by_folder: dict[tuple[str, str], ModuleInfo] = {(m.folder, m.identifier): m for m in modules}
    by_id: dict[str, ModuleInfo] = {}
    for mod in modules:
        by_id.setdefault(mod.identifier, mod)
    out = []
    for rel in walk_files(root):
        if rel.rsplit("/", 1)[-1] != INTENTS_FILE:
            continue
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        try:
            parsed = parse_intents((root / rel).read_bytes(), source=str(root / rel))
        except OntoskillsError:
            continue  # doctor/verify report malformed files; search just skips them
        for item in parsed.intents:
            ident = item.skills[0] if item.skills else ""
            found: ModuleInfo | None = by_folder.get((folder, ident)) or by_id.get(ident)
            module = found.module if found else rel
            skill = found.skill if found else ""
            out.append(IntentVector(skill, module, item.intent, _normalised(item.embedding), False))
    return out


def missing_modules(modules: list[ModuleInfo], stored: list[IntentVector]) -> list[ModuleInfo]:
    """Modules that declare intents but have no stored vector (QUIRKS 6)."""
    covered = {v.module for v in stored}
    return [m for m in modules if m.intents and m.module not in covered]


# ----------------------------------------------------------------------- derived vectors
def derived_path(home: Home, package_id: str) -> Path:
    author, name = package_id.split("/", 1)
    return home.derived_dir / "vectors" / author / f"{name}.npz"


def derived_identity(home: Home) -> str:
    """Stats of every derived-vectors file: changes when install, update or remove rewrites
    one (the catalog reloads on it)."""
    root = home.derived_dir / "vectors"
    parts = []
    for path in sorted(root.glob("*/*.npz")) if root.is_dir() else []:
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path.parent.name}/{path.name}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def save_derived(
    path: Path,
    entries: list[tuple[ModuleInfo, str]],
    vectors: np.ndarray,
    fingerprint: str,
    extra: dict[str, object] | None = None,
) -> None:
    meta = {
        **(extra or {}),
        "version": DERIVED_VERSION,
        "fingerprint": fingerprint,
        "entries": [{"skill": m.skill, "module": m.module, "intent": i} for m, i in entries],
    }
    buf = io.BytesIO()
    np.savez(
        buf,
        vectors=np.asarray(vectors, dtype=np.float32),
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
    )
    atomic_write_bytes(path, buf.getvalue())


def read_derived(path: Path) -> tuple[dict[str, object], np.ndarray] | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = jsonio.loads_derived(bytes(data["meta"]))
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None
    if not isinstance(meta, dict) or meta.get("version") != DERIVED_VERSION:
        return None
    if len(meta.get("entries", [])) != len(vectors):
        return None
    return meta, vectors


def derived_fingerprint(path: Path) -> str | None:
    loaded = read_derived(path)
    return str(loaded[0].get("fingerprint")) if loaded else None


def load_vectors(home: Home, package_id: str) -> list[IntentVector]:
    """Stored + derived vectors of an installed package (empty when it has none)."""
    pkg_dir = home.package_dir(package_id)
    if not pkg_dir.is_dir():
        return []
    modules = read_modules(pkg_dir, read_manifest(pkg_dir))
    out = stored_vectors(pkg_dir, modules)
    loaded = read_derived(derived_path(home, package_id))
    if loaded is not None:
        meta, vectors = loaded
        covered = {v.module for v in out}
        entries = meta.get("entries", [])
        assert isinstance(entries, list)
        for e, vec in zip(entries, vectors, strict=True):
            if isinstance(e, dict) and e.get("module") not in covered:
                out.append(
                    IntentVector(
                        str(e.get("skill", "")), str(e["module"]), str(e["intent"]), vec, True
                    )
                )
    return out


def derived_by_text(home: Home, model_sha256: str | None = None) -> dict[str, np.ndarray]:
    """intent text -> derived vector, over every package's derived data.

    With model_sha256 (the lock's model.onnx hash) only data made by that model is used. For
    callers that derive on their own (the catalog): look texts up here before encoding.
    """
    out: dict[str, np.ndarray] = {}
    root = home.derived_dir / "vectors"
    for path in sorted(root.glob("*/*.npz")) if root.is_dir() else []:
        loaded = read_derived(path)
        if loaded is None:
            continue
        meta, vectors = loaded
        if model_sha256 and not str(meta.get("fingerprint", "")).endswith(":" + model_sha256):
            continue
        entries = meta.get("entries", [])
        assert isinstance(entries, list)
        for e, vec in zip(entries, vectors, strict=True):
            if isinstance(e, dict):
                out.setdefault(str(e.get("intent", "")), vec)
    return out


def cached_encode(
    home: Home, encode: Callable[[list[str]], np.ndarray], model_sha256: str | None = None
) -> Callable[[list[str]], np.ndarray]:
    """Wrap a batch encode function so texts with derived vectors on disk are not re-encoded."""
    known = derived_by_text(home, model_sha256)

    def run(texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        fresh = dict(zip(todo, encode(todo), strict=True)) if todo else {}
        return np.stack([known[t] if t in known else fresh[t] for t in texts]).astype(np.float32)

    return run
