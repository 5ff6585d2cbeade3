"""Build the catalog from the installed tree: lock packages (verified) + local skills.

Quirks handled (../shared/ontostore/QUIRKS.md): keys are author/pkg/skill (4), three names per
skill (5), intents.json mapped by folder + identifier (5, 6), skillsbench has Turtle-only
intents (8), skill paths at the package root or nested (9), aliases only in Turtle (10),
descriptions cut to "..." or ">" (10), one parse per module (11).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..errors import OntoskillsError
from ..lockfile import LockedModel, LockedPackage, Lockfile
from ..manifest import Manifest, SkillEntry, parse_manifest
from ..paths import Home
from ..skillheader import SkillHeader
from .builder import (
    INTENTS_FILE,
    Builder,
    Encode,
    ModuleRef,
    StoredOk,
    description_of,
    folder_of,
    merge,
)
from .local import add_local, local_skill_files
from .model import CatalogData, SkillRecord
from .verify import Verification

_NOT_ASSETS = (INTENTS_FILE, "package.json")


def _add_package(
    b: Builder, pkg: LockedPackage, verification: Verification, lock_model: LockedModel | None
) -> None:
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
    entries: list[tuple[SkillEntry, int]] = []
    for s in manifest.skills:
        # Disabled skills are indexed too (flagged, never served): search can then say
        # "installed but disabled" instead of acting as if they did not exist.
        enabled = pkg.skills.get(s.id, s.default_enabled)
        head = headers.get(s.path)
        if head is None:
            if enabled:
                b.problems.append(
                    f"{pid}/{s.id}: main module {s.path} unavailable; skill not served"
                )
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
                description=description_of(s.description, head.description, head.differentia),
                category=s.category or head.category,
                nature=head.nature,
                name=head.name or s.id,
                aliases=merge(list(s.aliases), head.aliases),
                intents=merge(list(s.intents), head.intents),
                depends_on=list(s.depends_on),
                enabled=enabled,
                content_hash=head.content_hash,
                differentia=head.differentia,
            )
        )
        if idx is not None:
            entries.append((s, idx))
    _attach_files(b, pkg, manifest, entries, headers, good, lock_model)


def _attach_files(
    b: Builder,
    pkg: LockedPackage,
    manifest: Manifest,
    entries: list[tuple[SkillEntry, int]],
    headers: dict[str, SkillHeader],
    good: list[str],
    lock_model: LockedModel | None,
) -> None:
    """Every verified file to the skill manifest.owner_of names (the one rule install, enable
    and the reference index use); a file of a skill that is not served is not served.

    Linear in files + modules: each file's owner is asked once and files are grouped by
    owner and by folder in one pass (a scan of every file per skill, or per intents.json,
    was O(skills x files); merging sub-modules' intents one module at a time, quadratic)."""
    pid, root = pkg.id, b.home.package_dir(pkg.id)
    idx_of = {s.id: idx for s, idx in entries}
    owners: dict[str, int | None] = {}
    for path in good:
        entry = manifest.owner_of(path)
        owners[path] = idx_of.get(entry.id) if entry is not None else None
    more: dict[int, tuple[list[str], list[str]]] = {}  # sub-modules' aliases, intents
    first_module = len(b.modules)
    for path, head in headers.items():
        owner = owners[path]
        if owner is None:
            continue
        if path != b.records[owner].main_module:
            b.records[owner].modules.append(path)
            aliases, intents = more.setdefault(owner, ([], []))
            aliases.extend(head.aliases)
            intents.extend(head.intents)
        b.modules.append(ModuleRef(path, head, owner))
    assets: dict[int, list[str]] = {}
    for path in good:
        owner = owners[path]
        name = PurePosixPath(path).name
        if owner is not None and not path.endswith(".ttl") and name not in _NOT_ASSETS:
            assets.setdefault(owner, []).append(path)
    for _, idx in entries:
        rec = b.records[idx]
        rec.modules.insert(0, rec.main_module)
        rec.assets = assets.get(idx, [])
        if idx in more:
            rec.aliases = merge(rec.aliases, more[idx][0])
            rec.intents = merge(rec.intents, more[idx][1])
        b.cap_intents(idx)  # before its vectors are read, which the cap also bounds
    pkg_modules = b.modules[first_module:]
    by_folder: dict[str, list[ModuleRef]] = {}
    for m in pkg_modules:
        by_folder.setdefault(folder_of(m.path), []).append(m)
    for path in good:
        if PurePosixPath(path).name == INTENTS_FILE:
            in_folder = by_folder.get(folder_of(path), [])
            b.add_intents_file(root / path, f"{pid}/{path}", in_folder, owners[path])
    if lock_model is not None:
        _add_derived_file(b, pkg, lock_model, pkg_modules)


def _add_derived_file(
    b: Builder, pkg: LockedPackage, model: LockedModel, modules: list[ModuleRef]
) -> None:
    """Vectors `install --with-embeddings` derived for modules without stored ones
    (state/derived/vectors/<author>/<pkg>.npz), when made for this content and model."""
    from ..embeddings.sync import fingerprint
    from ..embeddings.vectors import derived_path, read_derived

    if b.stored_ok is not None and not b.stored_ok(model.model):
        return  # made by another model than the encoder's: it derives its own
    loaded = read_derived(derived_path(b.home, pkg.id))
    if loaded is None or loaded[0].get("fingerprint") != fingerprint(pkg, model):
        return
    meta, vectors = loaded
    entries = meta.get("entries")
    if not isinstance(entries, list) or b.vectors.dim not in (None, vectors.shape[1]):
        return
    b.vectors.dim = b.vectors.dim or int(vectors.shape[1])
    by_path = {m.path: m for m in modules if not m.has_vectors}
    for entry, vec in zip(entries, vectors, strict=True):
        m = by_path.get(str(entry.get("module"))) if isinstance(entry, dict) else None
        if m is not None:
            b.vectors.derived += b.vectors.add(m.owner, str(entry.get("intent", "")), vec)
            m.has_vectors = True


def build_catalog(
    home: Home,
    lock: Lockfile,
    verification: Verification,
    *,
    local_files: list[Path] | None = None,
    encode: Encode | None = None,
    stored_ok: StoredOk | None = None,
) -> CatalogData:
    b = Builder(home, encode, stored_ok)
    b.problems.extend(verification.problems)
    for pid in sorted(lock.packages):
        _add_package(b, lock.packages[pid], verification, lock.embeddings)
    add_local(b, local_files if local_files is not None else local_skill_files(home))
    return b.finish()
