"""Read-only queries over the home: list, info, outdated, doctor (named so as not to shadow
the stdlib `inspect` module)."""

from __future__ import annotations

from dataclasses import dataclass, field
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


def list_packages(session: Session) -> list[dict[str, Any]]:
    lock = load(session.lockfile_path)
    rows = []
    for pid, pkg in sorted(lock.packages.items()):
        rows.append(
            {
                "package": pid,
                "version": pkg.version,
                "trust_tier": pkg.trust_tier,
                "registry": pkg.registry,
                "skills": {"enabled": sum(pkg.skills.values()), "installed": len(pkg.skills)},
                "files": len(pkg.files),
                "with_embeddings": pkg.with_embeddings,
            }
        )
    return rows


def package_info(session: Session, spec: str) -> dict[str, Any]:
    pid, _ = parse_spec(spec)
    lock = load(session.lockfile_path)
    pkg = lock.packages.get(pid)
    if pkg is None:
        raise NotFoundError(f"{pid} is not installed", hint=f"`ontoskills install {pid}`")
    reg = lock.registries.get(pkg.registry)
    manifest_path = session.home.package_dir(pid) / "package.json"
    skills: list[dict[str, Any]] = []
    description = ""
    if manifest_path.is_file():
        manifest = parse_manifest(manifest_path.read_bytes(), source=str(manifest_path))
        description = manifest.description
        for s in manifest.skills:
            if s.id in pkg.skills:
                skills.append(
                    {
                        "id": s.id,
                        "enabled": pkg.skills[s.id],
                        "description": s.description,
                        "depends_on": list(s.depends_on),
                    }
                )
    return {
        "package": pid,
        "version": pkg.version,
        "description": description,
        "trust_tier": pkg.trust_tier,
        "registry": {
            "name": pkg.registry,
            "kind": reg.kind if reg else None,
            "url": redact_url(reg.url) if reg else None,
            "commit": pkg.commit,
        },
        "path": str(session.home.package_dir(pid)),
        "integrity": pkg.integrity,
        "with_embeddings": pkg.with_embeddings,
        "files": len(pkg.files),
        "bytes": sum(f.size for f in pkg.files),
        "skills": skills,
    }


def outdated(session: Session) -> list[dict[str, Any]]:
    """Compare every locked package with its registry now, without downloading packages."""
    lock = load(session.lockfile_path, required=True)
    rows = []
    for pid, pkg in sorted(lock.packages.items()):
        locked_reg = lock.registries.get(pkg.registry)
        if locked_reg is None:
            continue
        reg = session.registry_for_lock(locked_reg)
        row: dict[str, Any] = {"package": pid, "version": pkg.version, "trust_tier": pkg.trust_tier}
        # A registry that is not there (no index.json, not a registry) is an error naming
        # it; only a package its index no longer lists is "removed".
        entry = session.snapshot(reg).index.get(pid)
        if entry is None:
            rows.append({**row, "status": "removed-from-registry"})
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
            {
                **row,
                "latest_version": manifest.version,
                "latest_trust_tier": latest_tier,
                "status": "outdated" if changes else "current",
                "changes": changes,
            }
        )
    return rows


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

    @property
    def drifted(self) -> bool:
        return (
            any(not d.clean for d in self.packages.values())
            or bool(self.model_drift)
            or bool(self.planted_links)
        )

    @property
    def healthy(self) -> bool:
        return not (self.drifted or self.staging or self.lock_error or self.problems)

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
