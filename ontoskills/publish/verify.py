"""`registry verify`: check a whole registry the way every client would read it.

Works over the `BaseSource` protocol, so folders, git and (when available) HTTP registries are
verified by the same code the installer reads them with: every index entry resolves, every
manifest validates, every module parses with one skill node, every listed file exists and
matches its hash, no stray or unsafe paths. The real store's tolerated quirks
(../shared/ontostore/QUIRKS.md) are warnings; anything a client would refuse is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import NotFoundError, OntoskillsError
from ..progress import NullReporter, Reporter
from ..sources import BaseSource
from .checks import Finding, PackageCheck, check_package
from .consistency import local_findings, sparse_findings
from .files import MANIFEST


@dataclass
class VerifyReport:
    registry: str
    commit: str | None = None
    packages: int = 0
    skills: int = 0
    modules: int = 0
    files_checked: int = 0
    findings: list[Finding] = field(default_factory=list)
    signed: dict[str, Any] | None = None  # TUF: root version, targets, expiries (signed only)

    @property
    def errors(self) -> int:
        return sum(f.level == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.level == "warning" for f in self.findings)

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "registry verify",
            "registry": self.registry,
            "commit": self.commit,
            "ok": self.ok,
            "summary": {
                "packages": self.packages,
                "skills": self.skills,
                "modules": self.modules,
                "files_checked": self.files_checked,
                "errors": self.errors,
                "warnings": self.warnings,
            },
            "findings": [f.to_json() for f in self.findings],
            "signed": self.signed,
        }


def verify_registry(
    source: BaseSource, reporter: Reporter | None = None, local: Path | None = None
) -> VerifyReport:
    """`local`: the registry's folder when verifying a path (leftovers, git work tree)."""
    rep = reporter or NullReporter()
    report = VerifyReport(registry=source.config.url)
    rep.stage("reading index.json")
    try:
        snap = source.load_index()
    except OntoskillsError as exc:
        report.findings.append(Finding("error", "index", exc.message, None, type(exc)))
        return report
    report.commit = snap.commit
    for w in snap.index.warnings:
        report.findings.append(Finding("warning", "index", w))
    checks: list[PackageCheck] = []
    rep.stage("verifying packages", total=len(snap.index))
    for entry in snap.index:
        pc = _check_entry(
            source, entry.package_id, entry.manifest_path, entry.package_root, entry.trust_tier
        )
        checks.append(pc)
        report.findings.extend(pc.findings)
        report.files_checked += pc.files_checked
        report.modules += len(pc.modules)
        if pc.manifest is not None:
            report.skills += len(pc.manifest.skills)
        rep.advance()
    report.packages = len(checks)
    report.findings.extend(_dependency_findings(checks))
    report.findings.extend(_unindexed(source, {e.package_root for e in snap.index}))
    rep.stage("checking the sparse index")
    report.findings.extend(sparse_findings(source, snap.sha256))
    _signed_findings(source, report, rep)
    if local is not None:
        report.findings.extend(local_findings(local, snap.commit))
    return report


def _signed_findings(source: BaseSource, report: VerifyReport, rep: Reporter) -> None:
    """A signed registry (metadata/root.json): signatures, thresholds, root chain, expiries,
    and every served file against its signed target (signing/check.py)."""
    from ..signing import MAX_ROOT_BYTES, ROOT_PATH

    try:
        present = source.probe(ROOT_PATH, max_bytes=MAX_ROOT_BYTES) is not None
    except OntoskillsError as exc:
        report.findings.append(Finding("error", "metadata-invalid", exc.message))
        return
    if not present:
        return
    from ..signing.check import check_registry

    rep.stage("checking signatures")
    result = check_registry(source)
    report.findings.extend(Finding(p.level, p.code, p.message) for p in result.problems)
    report.signed = {
        "root_version": result.root_version,
        "targets": result.targets,
        "expires": result.expires,
    }


def _check_entry(
    source: BaseSource, pid: str, manifest_path: str, root: str, tier: str
) -> PackageCheck:
    try:
        data = source.read(manifest_path, max_bytes=limits.MAX_MANIFEST_BYTES)
        listing_raw = source.list_package(root)
    except OntoskillsError as exc:
        pc = PackageCheck(pid)
        pc.add(
            "error", "unresolved-entry", f"index entry does not resolve: {exc.message}", type(exc)
        )
        return pc
    listing = None if listing_raw is None else {f.path: f.size for f in listing_raw}
    prefix = f"{root}/" if root else ""

    def read(rel: str) -> bytes:
        return source.read(prefix + rel, max_bytes=limits.MAX_FILE_BYTES)

    if manifest_path != f"{prefix}{MANIFEST}":
        pc = PackageCheck(pid)
        pc.add(
            "error", "manifest-path", f"manifest_path {manifest_path} is not <root>/package.json"
        )
        return pc
    return check_package(pid, data, read, listing, strict=False, index_tier=tier)


def _dependency_findings(checks: list[PackageCheck]) -> list[Finding]:
    everywhere = {s.id for pc in checks if pc.manifest for s in pc.manifest.skills}
    out = []
    for pc in checks:
        if pc.manifest is None:
            continue
        own = {s.id for s in pc.manifest.skills}
        missing = sorted(
            {
                d
                for s in pc.manifest.skills
                for d in s.depends_on
                if d not in own and d not in everywhere
            }
        )
        if missing:
            out.append(
                Finding(
                    "warning",
                    "unresolved-dependency",
                    f"dependencies found nowhere in the registry: {', '.join(missing)}",
                    pc.package_id,
                )
            )
    return out


def _unindexed(source: BaseSource, roots: set[str]) -> list[Finding]:
    """Package folders (or stray files) under packages/ that no index entry points to."""
    try:
        listing = source.list_package("packages")
    except NotFoundError:  # an empty registry: git does not keep an empty packages/ folder
        return []
    except OntoskillsError as exc:
        return [Finding("error", "unsafe-path", exc.message, None, type(exc))]
    if listing is None:
        return []
    out = []
    orphans: set[str] = set()
    for f in listing:
        path = f"packages/{f.path}"
        if any(path.startswith(r + "/") for r in roots):
            continue
        parts = f.path.split("/")
        key = "/".join(parts[:2]) if len(parts) > 2 else f.path
        if key not in orphans:
            orphans.add(key)
            out.append(
                Finding("warning", "unindexed", f"packages/{key} is not referenced by index.json")
            )
    return out
