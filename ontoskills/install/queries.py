"""Read-only queries over the home: list, info, outdated, doctor (named so as not to shadow
the stdlib `inspect` module)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import NotFoundError, OntoskillsError
from ..fsutil import sha256_bytes
from ..lockfile import Lockfile, load
from ..manifest import parse_manifest
from ..paths import Home
from ..redact import redact_url
from ..safety import parse_spec
from ..sources.sparse import client_tier
from . import homelock
from .session import Session
from .state import Drift, installed_package_dirs, package_drift
from .store import StoreReport, check_store


@dataclass(frozen=True)
class PackageRow:
    """One installed package as `list` shows it."""

    package: str
    version: str
    trust_tier: str
    registry: str
    enabled: int  # skills served
    installed: int  # skills installed (enabled or not)
    files: int
    with_embeddings: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "version": self.version,
            "trust_tier": self.trust_tier,
            "registry": self.registry,
            "skills": {"enabled": self.enabled, "installed": self.installed},
            "files": self.files,
            "with_embeddings": self.with_embeddings,
        }


@dataclass(frozen=True)
class PackageList:
    """`list`: every package the lockfile records."""

    lockfile: Path
    packages: tuple[PackageRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"lockfile": str(self.lockfile), "packages": [p.to_json() for p in self.packages]}


def list_packages(session: Session) -> PackageList:
    lock = load(session.lockfile_path)
    rows = tuple(
        PackageRow(
            package=pid,
            version=pkg.version,
            trust_tier=pkg.trust_tier,
            registry=pkg.registry,
            enabled=sum(pkg.skills.values()),
            installed=len(pkg.skills),
            files=len(pkg.files),
            with_embeddings=pkg.with_embeddings,
        )
        for pid, pkg in sorted(lock.packages.items())
    )
    return PackageList(session.lockfile_path, rows)


@dataclass(frozen=True)
class SkillInfo:
    id: str
    enabled: bool
    description: str
    depends_on: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "enabled": self.enabled,
            "description": self.description,
            "depends_on": list(self.depends_on),
        }


@dataclass(frozen=True)
class PackageInfo:
    """`info PKG`: one installed package, where it came from and its skills."""

    package: str
    version: str
    description: str
    trust_tier: str
    registry: str
    registry_kind: str | None  # None: the lock names a registry it does not record
    registry_url: str | None  # redacted
    commit: str | None
    path: Path
    integrity: str
    with_embeddings: bool
    files: int
    bytes: int
    skills: tuple[SkillInfo, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "version": self.version,
            "description": self.description,
            "trust_tier": self.trust_tier,
            "registry": {
                "name": self.registry,
                "kind": self.registry_kind,
                "url": self.registry_url,
                "commit": self.commit,
            },
            "path": str(self.path),
            "integrity": self.integrity,
            "with_embeddings": self.with_embeddings,
            "files": self.files,
            "bytes": self.bytes,
            "skills": [s.to_json() for s in self.skills],
        }


def package_info(session: Session, spec: str) -> PackageInfo:
    pid, _ = parse_spec(spec)
    lock = load(session.lockfile_path)
    pkg = lock.packages.get(pid)
    if pkg is None:
        raise NotFoundError(f"{pid} is not installed", hint=f"`ontoskills install {pid}`")
    reg = lock.registries.get(pkg.registry)
    manifest_path = session.home.package_dir(pid) / "package.json"
    skills: list[SkillInfo] = []
    description = ""
    if manifest_path.is_file():
        manifest = parse_manifest(manifest_path.read_bytes(), source=str(manifest_path))
        description = manifest.description
        for s in manifest.skills:
            if s.id in pkg.skills:
                skills.append(
                    SkillInfo(s.id, pkg.skills[s.id], s.description, tuple(s.depends_on))
                )
    return PackageInfo(
        package=pid,
        version=pkg.version,
        description=description,
        trust_tier=pkg.trust_tier,
        registry=pkg.registry,
        registry_kind=reg.kind if reg else None,
        registry_url=redact_url(reg.url) if reg else None,
        commit=pkg.commit,
        path=session.home.package_dir(pid),
        integrity=pkg.integrity,
        with_embeddings=pkg.with_embeddings,
        files=len(pkg.files),
        bytes=sum(f.size for f in pkg.files),
        skills=tuple(skills),
    )


@dataclass(frozen=True)
class OutdatedRow:
    """One locked package against its registry now. A package gone from its registry has
    only `status` ("removed-from-registry"): no latest version, tier or changes."""

    package: str
    version: str
    trust_tier: str
    status: str  # current | outdated | removed-from-registry
    latest_version: str | None = None
    latest_trust_tier: str | None = None
    changes: tuple[str, ...] | None = None  # version, manifest, trust, files

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "package": self.package,
            "version": self.version,
            "trust_tier": self.trust_tier,
        }
        if self.changes is not None:
            row["latest_version"] = self.latest_version
            row["latest_trust_tier"] = self.latest_trust_tier
        row["status"] = self.status
        if self.changes is not None:
            row["changes"] = list(self.changes)
        return row


@dataclass(frozen=True)
class Outdated:
    packages: tuple[OutdatedRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"packages": [r.to_json() for r in self.packages]}


def outdated(session: Session) -> Outdated:
    """Compare every locked package with its registry now, without downloading packages.
    No lock is an empty home, as for `list`: nothing is outdated (exit 0, not 3)."""
    lock = load(session.lockfile_path)
    rows = []
    for pid, pkg in sorted(lock.packages.items()):
        locked_reg = lock.registries.get(pkg.registry)
        if locked_reg is None:
            continue
        reg = session.registry_for_lock(locked_reg)
        row = OutdatedRow(pid, pkg.version, pkg.trust_tier, "removed-from-registry")
        # A registry that is not there (no index.json, not a registry) is an error naming
        # it; only a package its index no longer lists is "removed".
        entry = session.snapshot(reg).index.get(pid)
        if entry is None:
            rows.append(row)
            continue
        src = session.index_source(reg)
        raw = src.read(entry.manifest_path, max_bytes=limits.MAX_MANIFEST_BYTES)
        manifest = parse_manifest(raw, source=entry.manifest_path, expected_id=pid)
        latest_tier = client_tier(session.snapshot(reg).index, entry, reg.trust)
        changes = []
        if manifest.version != pkg.version:
            changes.append("version")
        locked_manifest = pkg.file("package.json")
        if locked_manifest is not None and locked_manifest.sha256 != sha256_bytes(raw):
            changes.append("manifest")
        if latest_tier != pkg.trust_tier:
            changes.append("trust")
        listing = src.list_package(entry.package_root)
        if listing is not None:
            sizes = {f.path: f.size for f in listing}
            locked_sizes = {f.path: f.size for f in pkg.files if f.path != "package.json"}
            if any(sizes.get(p) != s for p, s in locked_sizes.items()):
                changes.append("files")
        rows.append(
            replace(
                row,
                status="outdated" if changes else "current",
                latest_version=manifest.version,
                latest_trust_tier=latest_tier,
                changes=tuple(changes),
            )
        )
    return Outdated(tuple(rows))


@dataclass
class DoctorReport:
    packages: dict[str, Drift] = field(default_factory=dict)
    unmanaged: list[str] = field(default_factory=list)
    staging: list[str] = field(default_factory=list)
    stale_owner: dict[str, Any] | None = None
    lock_error: str | None = None
    problems: list[str] = field(default_factory=list)
    model_drift: list[str] = field(default_factory=list)  # embedding model files vs the lock
    planted_links: list[str] = field(default_factory=list)  # symlinks at folders we write
    store: StoreReport = field(default_factory=StoreReport)  # files vs their blobs

    @property
    def drifted(self) -> bool:
        return (
            any(not d.clean for d in self.packages.values())
            or bool(self.model_drift)
            or bool(self.planted_links)
        )

    @property
    def healthy(self) -> bool:
        return not (
            self.drifted
            or self.staging
            or self.lock_error
            or self.problems
            or self.store.damaged_blobs
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "lock_error": self.lock_error,
            "packages": {pid: d.to_json() for pid, d in self.packages.items()},
            "unmanaged": list(self.unmanaged),
            "staging": list(self.staging),
            "stale_lock_owner": self.stale_owner,
            "problems": list(self.problems),
            "model_drift": list(self.model_drift),
            "planted_links": list(self.planted_links),
            "store": self.store.to_json(),
        }


def planted_links(home: Home) -> list[str]:
    """Symlinks where ontoskills keeps folders it writes (every command refuses them, exit
    4): the managed folders, each author/package folder, staging and derived-data folders."""
    fixed = [home.ontologies, home.author_dir, home.system_dir, home.embeddings_dir]
    fixed += [home.state_dir, home.derived_dir, home.staging_dir, home.process_lock]
    found = [str(p) for p in fixed if p.is_symlink()]
    for parent, depth in ((home.author_dir, 2), (home.staging_dir, 1), (home.derived_dir, 2)):
        if parent.is_symlink():
            continue
        level: list[Path] = [parent]
        for _ in range(depth):
            children: list[Path] = []
            for folder in level:
                if folder.is_dir():
                    for child in sorted(folder.iterdir()):
                        if child.is_symlink():
                            found.append(str(child))
                        elif child.is_dir():
                            children.append(child)
            level = children
    return found


def doctor(session: Session, *, fast: bool = False) -> DoctorReport:
    """Re-hash every installed file against the lock; report leftovers and stale locks."""
    report = DoctorReport()
    home = session.home
    report.planted_links = planted_links(home)
    try:
        lock: Lockfile = load(session.lockfile_path)
    except OntoskillsError as exc:
        report.lock_error = exc.message
        return report
    for pid, pkg in sorted(lock.packages.items()):
        report.packages[pid] = package_drift(home, pkg, fast=fast)
    report.store = check_store(home, session.cache, lock, report.packages, fast=fast)
    report.unmanaged = [p for p in installed_package_dirs(home) if p not in lock.packages]
    if lock.embeddings is not None or any(p.with_embeddings for p in lock.packages.values()):
        from ..embeddings.sync import doctor_checks  # numpy & co. only when needed

        report.model_drift, emb_problems = doctor_checks(home, lock, fast=fast)
        report.problems += emb_problems
    if home.staging_dir.is_dir() and not home.staging_dir.is_symlink():
        report.staging = sorted(p.name for p in home.staging_dir.iterdir() if not p.is_symlink())
    owner = homelock.read_owner(home)
    if owner and not homelock.pid_alive(owner.get("pid")) and not homelock.is_locked(home):
        report.stale_owner = owner
    return report
