"""Build the catalog from the installed tree: lock packages (verified) + local skills.

Quirks handled (../shared/ontostore/QUIRKS.md): keys are author/pkg/skill (4), three names per
skill (5), intents.json mapped by folder + identifier (5, 6), skillsbench has Turtle-only
intents (8), skill paths at the package root or nested (9), aliases only in Turtle (10),
descriptions cut to "..." or ">" (10), one parse per module (11).
"""

from __future__ import annotations

from collections.abc import Callable
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
    description_of,
    folder_of,
    merge,
)
from .local import add_local, local_skill_files
from .model import CatalogData, SkillRecord
from .verify import Verification


def _add_package(
    b: Builder, pkg: LockedPackage, verification: Verification, lock_model: LockedModel | None
) -> None:
    pid = pkg.id
    root = b.home.package_dir(pid)
    manifest = _verified_manifest(b, pkg, verification)
    if manifest is None:
        return
    good = [f.path for f in pkg.files if verification.ok(pid, f.path)]
    ttl = sorted(p for p in good if p.endswith(".ttl"))
    headers = {p: h for p in ttl if (h := b.header(root / p, f"{pid}/{p}")) is not None}
    entries = _skill_records(b, pkg, manifest, headers)
    # Every file belongs to the skill manifest.owner_of names (the one rule install, enable
    # and the reference index use); a file of a skill that is not served is not served.
    idx_of = {s.id: idx for s, idx in entries}

    def owner_idx(path: str) -> int | None:
        owner = manifest.owner_of(path)
        return idx_of.get(owner.id) if owner is not None else None

    _attach_modules(b, headers, owner_idx)
    for _, idx in entries:
        rec = b.records[idx]
        rec.modules.insert(0, rec.main_module)
        rec.assets = [
            p
            for p in good
            if owner_idx(p) == idx
            and not p.endswith(".ttl")
            and PurePosixPath(p).name not in (INTENTS_FILE, "package.json")
        ]
    pkg_modules = [m for m in b.modules if b.records[m.owner].package == pid]
    for path in good:
        if PurePosixPath(path).name != INTENTS_FILE:
            continue
        folder = folder_of(path)
        in_folder = [m for m in pkg_modules if folder_of(m.path) == folder]
        b.add_intents_file(root / path, f"{pid}/{path}", in_folder, owner_idx(path))
    if lock_model is not None:
        _add_derived_file(b, pkg, lock_model, pkg_modules)


def _verified_manifest(
    b: Builder, pkg: LockedPackage, verification: Verification
) -> Manifest | None:
    """The package's parsed package.json, or None (a problem recorded: package not served)."""
    pid = pkg.id
    if not verification.ok(pid, "package.json") or pkg.file("package.json") is None:
        b.problems.append(f"{pid}: package.json failed verification; package not served")
        return None
    try:
        return parse_manifest(
            (b.home.package_dir(pid) / "package.json").read_bytes(),
            source=f"{pid}/package.json",
            expected_id=pid,
        )
    except (OSError, OntoskillsError) as exc:
        b.problems.append(f"{pid}: {exc}; package not served")
        return None


def _skill_records(
    b: Builder, pkg: LockedPackage, manifest: Manifest, headers: dict[str, SkillHeader]
) -> list[tuple[SkillEntry, int]]:
    """One record per skill whose main module was read: (its manifest entry, record index)."""
    pid = pkg.id
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
                root=str(b.home.package_dir(pid)),
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
    return entries


def _attach_modules(
    b: Builder, headers: dict[str, SkillHeader], owner_idx: Callable[[str], int | None]
) -> None:
    """Sub-modules join their owning skill's record (its aliases and intents too)."""
    for path, head in headers.items():
        owner = owner_idx(path)
        if owner is None:
            continue
        if path != b.records[owner].main_module:
            rec = b.records[owner]
            rec.modules.append(path)
            rec.aliases = merge(rec.aliases, head.aliases)
            rec.intents = merge(rec.intents, head.intents)
        b.modules.append(ModuleRef(path, head, owner))


def _add_derived_file(
    b: Builder, pkg: LockedPackage, model: LockedModel, modules: list[ModuleRef]
) -> None:
    """Vectors `install --with-embeddings` derived for modules without stored ones
    (state/derived/vectors/<author>/<pkg>.npz), when made for this content and model."""
    from ..embeddings.sync import fingerprint
    from ..embeddings.vectors import derived_path, read_derived

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
) -> CatalogData:
    b = Builder(home, encode)
    b.problems.extend(verification.problems)
    for pid in sorted(lock.packages):
        _add_package(b, lock.packages[pid], verification, lock.embeddings)
    add_local(b, local_files if local_files is not None else local_skill_files(home))
    return b.finish()
