"""`tree` and `why`: the lock as a graph, read-only (as `cargo tree` / `npm why`).

requested spec -> package -> skills, each skill with its same-package dependencies (the
manifest's `depends_on_skills`, which `pack` derives from `oc:dependsOnSkill`: the same ids
`resolve.select_skills` followed when it chose "these skills + their dependencies"). The
dependencies come from the installed `package.json`, used only when its sha256 is the one
the lock records (an edited or missing manifest is a problem line, never trusted).
"""

from __future__ import annotations

import difflib
from collections import deque
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..errors import FormatError, NotFoundError, OntoskillsError
from ..fsutil import sha256_bytes
from ..lockfile import LockedPackage, load
from ..manifest import parse_manifest
from ..paths import Home
from ..safety import parse_spec
from .session import Session

MANIFEST = "package.json"


@dataclass(frozen=True)
class TreeSkill:
    id: str
    enabled: bool
    depends_on: tuple[str, ...]  # installed skills of the same package it depends on

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "enabled": self.enabled, "depends_on": list(self.depends_on)}


@dataclass(frozen=True)
class TreeSpec:
    """One spec the user asked for and the skills it names (all of them: a whole package)."""

    spec: str
    skills: tuple[str, ...]

    @property
    def whole(self) -> bool:
        return self.spec.count("/") == 1

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "whole_package": self.whole, "skills": list(self.skills)}


@dataclass(frozen=True)
class TreePackage:
    package: str
    version: str
    trust_tier: str
    registry: str
    requested: tuple[TreeSpec, ...]
    skills: tuple[TreeSkill, ...]

    def skill(self, skill_id: str) -> TreeSkill | None:
        return next((s for s in self.skills if s.id == skill_id), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "version": self.version,
            "trust_tier": self.trust_tier,
            "registry": self.registry,
            "requested": [r.to_json() for r in self.requested],
            "skills": [s.to_json() for s in self.skills],
        }


@dataclass(frozen=True)
class Tree:
    lockfile: str
    packages: tuple[TreePackage, ...]
    problems: tuple[str, ...]  # packages whose dependencies could not be read

    def to_json(self) -> dict[str, Any]:
        return {
            "lockfile": self.lockfile,
            "packages": [p.to_json() for p in self.packages],
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class Reason:
    """One way a skill came in: `spec`, then the dependency chain from the skill the spec
    named to the one asked about (just the skill when the spec named it or its package)."""

    spec: str
    chain: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "chain": list(self.chain)}


@dataclass(frozen=True)
class Why:
    target: str  # author/pkg or author/pkg/skill
    package: str
    version: str
    skill: str | None
    enabled: bool | None  # None: the question was about a package
    reasons: tuple[Reason, ...]
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "package": self.package,
            "version": self.version,
            "skill": self.skill,
            "enabled": self.enabled,
            "reasons": [r.to_json() for r in self.reasons],
            "problems": list(self.problems),
        }


def _dependencies(home: Home, pkg: LockedPackage) -> dict[str, tuple[str, ...]]:
    """skill id -> its installed same-package dependencies, from the installed manifest when
    it is the one the lock records. OntoskillsError naming the package otherwise."""
    locked = pkg.file(MANIFEST)
    path = home.package_dir(pkg.id) / MANIFEST
    try:
        raw = limits.read_regular_file(
            path, limits.MAX_MANIFEST_BYTES, what="package manifest", error=FormatError
        )
    except OSError as exc:
        raise OntoskillsError(f"{pkg.id}: {MANIFEST} unreadable ({exc.strerror})") from None
    if locked is None or sha256_bytes(raw) != locked.sha256:
        raise OntoskillsError(f"{pkg.id}: {MANIFEST} does not match the lock")
    manifest = parse_manifest(raw, source=str(path), expected_id=pkg.id)
    return {
        s.id: tuple(d for d in s.depends_on if d in pkg.skills)
        for s in manifest.skills
        if s.id in pkg.skills
    }


def _package(home: Home, pkg: LockedPackage, problems: list[str]) -> TreePackage:
    try:
        deps = _dependencies(home, pkg)
    except OntoskillsError as exc:
        why_not = exc.message.removeprefix(f"{pkg.id}: ")
        problems.append(
            f"{pkg.id}: {why_not}; its skill dependencies are not shown "
            "(`ontoskills doctor` checks the package)"
        )
        deps = {}
    skills = tuple(TreeSkill(sid, pkg.skills[sid], deps.get(sid, ())) for sid in sorted(pkg.skills))
    specs = []
    for spec in sorted(set(pkg.requested)):
        _, named = parse_spec(spec)
        if named is None:
            specs.append(TreeSpec(spec, tuple(sorted(pkg.skills))))
        elif named in pkg.skills:
            specs.append(TreeSpec(spec, (named,)))
    return TreePackage(pkg.id, pkg.version, pkg.trust_tier, pkg.registry, tuple(specs), skills)


def tree(session: Session) -> Tree:
    """Every locked package with the specs that asked for it and its skills' dependencies."""
    lock = load(session.lockfile_path)
    problems: list[str] = []
    packages = tuple(
        _package(session.home, lock.packages[pid], problems) for pid in sorted(lock.packages)
    )
    return Tree(str(session.lockfile_path), packages, tuple(problems))


def dependency_chain(pkg: TreePackage, start: str, target: str) -> tuple[str, ...] | None:
    """The shortest chain of dependencies start -> ... -> target (breadth first), or None."""
    edges = {s.id: s.depends_on for s in pkg.skills}
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        sid = queue.popleft()
        if sid == target:
            chain = [sid]
            while (prev := came_from[chain[-1]]) is not None:
                chain.append(prev)
            return tuple(reversed(chain))
        for dep in edges.get(sid, ()):
            if dep not in came_from:
                came_from[dep] = sid
                queue.append(dep)
    return None


def why(session: Session, target: str) -> Why:
    """Which requested specs brought `target` (a package or one of its skills) in, and
    through which chain of skill dependencies. NotFoundError (exit 7) when not installed."""
    pid, skill = parse_spec(target)
    graph = tree(session)
    pkg = next((p for p in graph.packages if p.package == pid), None)
    if pkg is None:
        close = difflib.get_close_matches(pid, [p.package for p in graph.packages], n=3)
        raise NotFoundError(
            f"{pid} is not installed",
            hint=(f"did you mean {' or '.join(close)}? " if close else "")
            + "`ontoskills tree` shows what is",
        )
    problems = tuple(p for p in graph.problems if p.startswith(f"{pid}:"))
    if skill is None:
        reasons = tuple(Reason(r.spec, ()) for r in pkg.requested)
        return Why(target, pid, pkg.version, None, None, reasons, problems)
    found = pkg.skill(skill)
    if found is None:
        names = [s.id for s in pkg.skills]
        close = difflib.get_close_matches(skill, names, n=3)
        raise NotFoundError(
            f"{pid} has no installed skill {skill}",
            hint=(f"did you mean {' or '.join(close)}? " if close else "")
            + f"installed: {', '.join(names[:20])}",
        )
    found_reasons: list[Reason] = []
    for spec in pkg.requested:
        if spec.whole:
            found_reasons.append(Reason(spec.spec, (skill,)))
            continue
        chain = dependency_chain(pkg, spec.skills[0], skill)
        if chain is not None:
            found_reasons.append(Reason(spec.spec, chain))
    return Why(target, pid, pkg.version, skill, found.enabled, tuple(found_reasons), problems)
