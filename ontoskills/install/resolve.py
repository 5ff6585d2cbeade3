"""Resolve: registry index + manifest (+ folder listing) -> the exact files to install.

Trust comes from the registry index only (capped by the registry's configured trust); a
package's own `trust_tier` is reported and ignored. Unlisted assets are installed whole
where the source can list folders (git, folder); over HTTP we take what the manifest lists
plus its optional `files` array.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from .. import limits
from ..errors import (
    IntegrityError,
    LimitExceededError,
    NotFoundError,
    OntoskillsError,
    TrustError,
    UsageError,
)
from ..fsutil import sha256_bytes
from ..lockfile import LockedPackage, LockedRegistry
from ..lockfile import load as load_lock
from ..manifest import Manifest, SkillEntry, parse_manifest, tier_rank
from ..paths import expand_user
from ..registries import RegistryConfig
from ..sources import RemoteFile
from ..sources.sparse import client_tier
from .session import Session

MANIFEST = "package.json"


@dataclass
class PlannedFile:
    path: str  # relative to the package root
    sha256: str | None = None  # expected content, when known (manifest `files`, lock)
    size: int | None = None
    executable: bool = False
    from_lock: bool = False  # sha256 is what the lock recorded (else: what the manifest says)


@dataclass
class PackagePlan:
    package_id: str
    registry: RegistryConfig
    package_root: str  # registry-relative folder of the package
    version: str
    trust_tier: str
    requested: list[str]
    skills: dict[str, bool]
    files: list[PlannedFile]
    with_embeddings: bool
    commit: str | None = None  # git registries: the commit every file is read from
    index_sha256: str | None = None
    root_keys: tuple[str, ...] | None = None  # signed registry: its trusted root's key ids
    warnings: list[str] = field(default_factory=list)
    unresolved_deps: list[str] = field(default_factory=list)
    opt_in: list[str] = field(default_factory=list)  # off by the author's default, new here

    def locked_registry(self, name: str) -> LockedRegistry:
        return LockedRegistry(
            name=name,
            kind=self.registry.kind,
            url=self.registry.url,
            commit=self.commit,
            index_sha256=None if self.commit else self.index_sha256,
            signed=self.root_keys is not None,
            root_keys=self.root_keys or (),
        )


def locked_selection(pkg: LockedPackage) -> set[str] | None:
    """The skills a locked package was installed with (None: the whole package)."""
    if any(r.count("/") == 1 for r in pkg.requested):
        return None
    return set(pkg.skills)


def check_min_trust(
    package_id: str, tier: str, min_trust: str | None, reg: RegistryConfig | None = None
) -> None:
    if min_trust and tier_rank(tier) < tier_rank(min_trust):
        hint = "lower --min-trust, or choose a package from a more trusted publisher"
        if reg is not None and reg.trust is not None and tier == reg.trust:
            hint = (
                f"registry {reg.name} is capped at '{reg.trust}'; a registry you trust more can "
                "be added with `ontoskills registry add NAME URL --trust TIER`"
            )
        raise TrustError(
            f"{package_id} is '{tier}' from its registry, below --min-trust {min_trust}",
            hint=hint,
        )


def check_home_overlap(session: Session) -> None:
    """Before install/ci/update takes the home lock (which creates the home): refuse when the
    home and any local registry the command may read (the --registry or configured ones, and
    the lock's) contain each other, so not even the home lock lands inside a registry."""
    regs = list(session.registries())
    if session.lockfile_path.is_file():
        with contextlib.suppress(OntoskillsError, OSError):  # the command reports a bad lock
            lock = load_lock(session.lockfile_path)
            regs += [session.registry_for_lock(r) for r in lock.registries.values()]
    for reg in regs:
        check_overlap(session.home.root, reg)


def check_overlap(home: Path, reg: RegistryConfig) -> None:
    """A local registry and the home must not contain each other: an install would write into
    the registry it reads, or replace the registry's own folders while reading them."""
    url = reg.url[len("file://") :] if reg.url.startswith("file://") else reg.url
    if "://" in url or "@" in url:
        return
    home_real = Path(os.path.realpath(home))
    reg_real = Path(os.path.realpath(expand_user(url)))
    if home_real.is_relative_to(reg_real) or reg_real.is_relative_to(home_real):
        inside = "inside" if home_real.is_relative_to(reg_real) else "contains"
        raise UsageError(
            f"the home {home} {inside} the registry {reg.url}",
            hint="use a home and a registry folder that do not contain each other "
            "(--home or ONTOSKILLS_HOME)",
        )


def _is_embedding(path: str, manifest: Manifest) -> bool:
    return path.rsplit("/", 1)[-1] == "intents.json" or path in manifest.embedding_files


def select_skills(
    manifest: Manifest, wanted: set[str] | None
) -> tuple[list[SkillEntry], list[str]]:
    """The wanted skills plus their same-package dependency closure; and deps we cannot meet.

    O(skills + dependencies): a deque, and each skill queued once (a list popped from the
    front, refilled with every dependency of every skill, took 30 s on 850 x 850)."""
    if wanted is None:
        return list(manifest.skills), []
    by_id = {s.id: s for s in manifest.skills}
    check_skills_exist(manifest.package_id, wanted, set(by_id))
    seen = set(wanted)
    queue = deque(sorted(wanted))
    unresolved: dict[str, str] = {}  # missing dep -> the first skill that needs it
    while queue:
        sid = queue.popleft()
        for dep in by_id[sid].depends_on:
            if dep not in by_id:
                unresolved.setdefault(dep, sid)
            elif dep not in seen:
                seen.add(dep)
                queue.append(dep)
    chosen = [by_id[k] for k in sorted(seen)]
    return chosen, sorted(f"{sid} -> {dep}" for dep, sid in unresolved.items())


def check_skills_exist(package_id: str, wanted: set[str], available: set[str]) -> None:
    """NotFoundError (exit 7) naming the closest skills when a wanted skill is not there."""
    missing = sorted(wanted - available)
    if not missing:
        return
    close = sorted(
        {c for m in missing for c in difflib.get_close_matches(m, sorted(available), n=3)}
    )
    listed = ", ".join(sorted(available)[:20]) or "none"
    more = f" (+{len(available) - 20} more)" if len(available) > 20 else ""
    raise NotFoundError(
        f"{package_id} has no skill {', '.join(missing)}",
        hint=(f"did you mean {' or '.join(close)}? " if close else "")
        + f"available: {listed}{more}",
    )


def resolve(
    session: Session,
    package_id: str,
    *,
    skills: set[str] | None,
    requested: list[str],
    with_embeddings: bool,
    min_trust: str | None = None,
    existing: LockedPackage | None = None,
    registries: list[RegistryConfig] | None = None,
) -> PackagePlan:
    reg, entry = session.find_package(package_id, registries)
    check_overlap(session.home.root, reg)
    snap = session.snapshot(reg)
    src = session.index_source(reg)  # a signed registry verifies the manifest and listing
    raw = src.read(entry.manifest_path, max_bytes=limits.MAX_MANIFEST_BYTES)
    manifest = parse_manifest(
        raw, source=f"{reg.name}: {entry.manifest_path}", expected_id=package_id
    )
    tier = client_tier(snap.index, entry, reg.trust)  # capped; a sparse entry never raises it
    plan = PackagePlan(
        package_id=package_id,
        registry=reg,
        package_root=entry.package_root,
        version=manifest.version,
        trust_tier=tier,
        requested=requested,
        skills={},
        files=[],
        with_embeddings=with_embeddings,
        commit=snap.commit,
        index_sha256=snap.sha256,
        root_keys=session.opened(reg).root_keys,
    )
    if manifest.declared_tier and manifest.declared_tier != entry.trust_tier:
        # the store's quirk 3 (a package naming its own tier), not a registry's trust cap
        plan.warnings.append(
            f"{package_id} declares trust tier '{manifest.declared_tier}'; "
            f"the registry index says '{entry.trust_tier}', which is what counts"
        )
    check_min_trust(package_id, tier, min_trust, reg)

    listing = src.list_package(entry.package_root)
    if listing is None and manifest.files is None:
        plan.warnings.append(
            f"{package_id}: {reg.name} cannot list folders (static HTTP) and the manifest has "
            "no `files` array, so only the modules it lists are installed, not other assets; "
            "install from the registry's git repository to get the whole package"
        )
    files = _candidate_files(listing, manifest, reg.name, with_embeddings)
    chosen, plan.unresolved_deps = select_skills(manifest, skills)
    if skills is not None:
        keep = {s.id for s in chosen}
        files = {
            p: f
            for p, f in files.items()
            if (owner := manifest.owner_of(p)) is None or owner.id in keep
        }
    if not with_embeddings:
        files = {p: f for p, f in files.items() if not _is_embedding(p, manifest)}
    files[MANIFEST] = PlannedFile(MANIFEST, sha256_bytes(raw), len(raw), False)
    _check_limits(package_id, list(files.values()))
    plan.files = [files[p] for p in sorted(files)]
    previous = existing.skills if existing else {}
    # A new skill starts as its author set it (`default_enabled`), unless asked for by name;
    # a skill already in the lock keeps the user's choice.
    plan.skills = {
        s.id: previous.get(s.id, s.default_enabled or (skills is not None and s.id in skills))
        for s in chosen
    }
    # off by the package's default just now (not by a choice the lock kept: the user's)
    plan.opt_in = sorted(k for k, on in plan.skills.items() if not on and k not in previous)
    return plan


def _candidate_files(
    listing: list[RemoteFile] | None, manifest: Manifest, reg_name: str, with_embeddings: bool
) -> dict[str, PlannedFile]:
    declared = {f.path: f for f in manifest.files or ()}
    out: dict[str, PlannedFile] = {}
    if listing is None:  # HTTP: the manifest is all we can know
        for path in manifest.listed_paths():
            d = declared.get(path)
            out[path] = PlannedFile(
                path, d.sha256 if d else None, d.size if d else None, d.executable if d else False
            )
    else:
        for f in listing:
            if f.path == MANIFEST:
                continue
            d = declared.get(f.path)
            out[f.path] = PlannedFile(f.path, d.sha256 if d else None, f.size, f.executable)
        missing = sorted(set(manifest.listed_paths()) - set(out))
        if not with_embeddings:  # not installed anyway: a mirror made without them lacks them
            missing = [p for p in missing if not _is_embedding(p, manifest)]
        if missing:
            raise IntegrityError(
                f"{manifest.package_id} in {reg_name}: manifest lists files the registry does "
                f"not have: {', '.join(missing[:5])}",
                hint="install without --with-embeddings (a mirror made without "
                "--with-embeddings has no intent vectors), or mirror it again with it"
                if all(_is_embedding(p, manifest) for p in missing)
                else "the registry is inconsistent; report it to its maintainers",
            )
    out.pop(MANIFEST, None)
    return out


def _check_limits(package_id: str, files: list[PlannedFile]) -> None:
    if len(files) > limits.MAX_PACKAGE_FILES:
        raise LimitExceededError(
            f"{package_id} has {len(files)} files, over the {limits.MAX_PACKAGE_FILES} limit"
        )
    total = 0
    for f in files:
        if f.size is not None:
            if f.size > limits.MAX_FILE_BYTES:
                raise LimitExceededError(
                    f"{package_id}: {f.path} is {f.size} bytes, over the per-file limit",
                    hint="raise ONTOSKILLS_MAX_FILE_MB if you trust this registry",
                )
            total += f.size
    if total > limits.MAX_PACKAGE_BYTES:
        raise LimitExceededError(f"{package_id} is {total} bytes, over the package size limit")


def plan_from_lock(session: Session, pkg: LockedPackage, reg: LockedRegistry) -> PackagePlan:
    """A frozen plan: exactly the locked files, from the locked registry (and commit)."""
    config = session.registry_for_lock(reg)
    check_overlap(session.home.root, config)
    return PackagePlan(
        package_id=pkg.id,
        registry=config,
        package_root=pkg.root or f"packages/{pkg.id}",
        version=pkg.version,
        trust_tier=pkg.trust_tier,
        requested=list(pkg.requested),
        skills=dict(pkg.skills),
        files=[PlannedFile(f.path, f.sha256, f.size, f.executable, True) for f in pkg.files],
        with_embeddings=pkg.with_embeddings,
        commit=pkg.commit,
        index_sha256=reg.index_sha256,
        root_keys=reg.root_keys if reg.signed else None,
    )
