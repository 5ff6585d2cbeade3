"""`install`: resolve specs (or restore the lock) inside the mutation skeleton.

Per package: plan -> fetch and verify into staging -> `Mutation.apply` (decide.py, shared
with update): place and record, keep, or refuse. Any failure before the commit leaves the
previous tree and lock untouched (install/mutation.py).
"""

from __future__ import annotations

import re

from ..errors import NotFoundError, UsageError
from ..lockfile import LockedPackage
from ..registries import RegistryConfig
from ..safety import parse_spec
from .direct import is_direct, parse_direct
from .mutation import INSTALL, Mutation, Report, mutation
from .options import InstallOptions
from .resolve import check_skills_exist, locked_selection, resolve
from .session import Session


def install(session: Session, specs: list[str], opts: InstallOptions) -> Report:
    specs, versions = split_versions(specs)
    with mutation(session, INSTALL, opts) as m:
        if opts.with_embeddings and not specs and not opts.frozen:
            _add_embeddings(m)
        elif opts.frozen or not specs:
            m.restore(sorted(_group_specs(specs)))
            for pid, want in versions.items():
                _check_version(pid, want, m.lock.packages[pid].version, str(session.lockfile_path))
        else:
            _resolve_specs(m, list(specs), versions)
        m.commit()
    return m.report


def _add_embeddings(m: Mutation) -> None:
    """`install --with-embeddings` with no package (what the "no vectors" hints say): every
    locked package without vectors is resolved again, with them, from the registry its lock
    names (as `update` does; a bare `install PKG` would ask the configured registries); the
    others are restored from the lock as a plain `install` would. The lock then keeps
    `with_embeddings = true` for them."""
    session, lock = m.session, m.lock
    lacking = sorted(p for p, pkg in lock.packages.items() if not pkg.with_embeddings)
    if len(lacking) < len(lock.packages) or not lock.packages:  # empty: restore says so
        m.restore(sorted(set(lock.packages) - set(lacking)))
    for pid in lacking:
        old = lock.packages[pid]
        locked_reg = lock.registries.get(old.registry)
        plan = resolve(
            session,
            pid,
            skills=locked_selection(old),
            requested=old.requested,
            with_embeddings=True,
            min_trust=m.opts.min_trust,
            existing=old,
            registries=(
                [session.registry_for_lock(locked_reg)]
                if locked_reg is not None and not session.registry_override
                else None
            ),
        )
        m.apply(plan, old, m.stage(plan))
    m.prune_registries()


_VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")


def split_versions(specs: list[str]) -> tuple[list[str], dict[str, str]]:
    """`author/pkg@1.2.0` (npm's, uv's spelling): the specs without their `@version`, and
    package id -> the version asked for. A registry serves one version of a package, its
    current one, so a version is a check on what gets installed, never a choice."""
    plain: list[str] = []
    versions: dict[str, str] = {}
    for spec in specs:
        if is_direct(spec):  # a URL or path may hold an `@` (user@host, a folder name)
            plain.append(spec)
            continue
        base, at, version = spec.partition("@")
        if at:
            if not _VERSION_RE.fullmatch(version):
                raise UsageError(f"invalid version in {spec!r}", hint="write author/package@1.2.0")
            pid, _ = parse_spec(base)
            if versions.setdefault(pid, version) != version:
                raise UsageError(f"{pid} asked for at two versions: {versions[pid]}, {version}")
        plain.append(base)
    return plain, versions


def _check_version(pid: str, want: str, have: str, where: str) -> None:
    if want != have:
        raise NotFoundError(
            f"{pid}@{want} is not available: {where} has {pid} {have}",
            hint=f"a registry serves one version of a package, its current one "
            f"(`ontoskills install {pid}` installs {have}); the lock pins the version you "
            "installed, and `ontoskills ci` restores it",
        )


def _group_specs(specs: list[str]) -> dict[str, set[str] | None]:
    """package id -> wanted skills (None = the whole package)."""
    out: dict[str, set[str] | None] = {}
    for spec in specs:
        pid, skill = parse_spec(spec)
        if skill is None or out.get(pid, set()) is None:
            out[pid] = None
        else:
            current = out.setdefault(pid, set())
            assert current is not None
            current.add(skill)
    return out


def _wanted(existing: LockedPackage | None, new: set[str] | None) -> set[str] | None:
    if new is None or existing is None:
        return new
    previous = locked_selection(existing)
    return None if previous is None else new | previous


def _resolve_specs(m: Mutation, specs: list[str], versions: dict[str, str]) -> None:
    session, lock, opts = m.session, m.lock, m.opts
    direct: dict[str, RegistryConfig] = {}  # github:..., URLs, paths: their own registry
    for i, spec in enumerate(specs):
        if is_direct(spec):
            found = parse_direct(session, spec)
            direct[found.package_id] = found.registry
            specs[i] = found.spec
    for pid, skills in _group_specs(specs).items():
        existing = lock.packages.get(pid)
        requested = sorted(
            set((existing.requested if existing else []) + [s for s in specs if s.startswith(pid)])
        )
        plan = resolve(
            session,
            pid,
            skills=_wanted(existing, skills),
            requested=requested,
            with_embeddings=opts.with_embeddings or bool(existing and existing.with_embeddings),
            min_trust=opts.min_trust,
            existing=existing,
            registries=[direct[pid]] if pid in direct else None,
        )
        if pid in versions:
            _check_version(pid, versions[pid], plan.version, f"registry {plan.registry.name}")
        if skills:  # the whole package is (or was) wanted: a typo'd skill still is not there
            check_skills_exist(pid, skills, set(plan.skills))
        for name in skills or ():  # named now (author/pkg/skill): the user wants it served
            plan.skills[name] = True
        m.apply(plan, existing, m.stage(plan))
    m.prune_registries()
