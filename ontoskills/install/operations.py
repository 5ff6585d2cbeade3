"""`install`: resolve specs (or restore the lock) inside the mutation skeleton.

Per package: plan -> fetch and verify into staging -> `Mutation.apply` (decide.py, shared
with update): place and record, keep, or refuse. Any failure before the commit leaves the
previous tree and lock untouched (install/mutation.py).
"""

from __future__ import annotations

from ..lockfile import LockedPackage
from ..registries import RegistryConfig
from ..safety import parse_spec
from .direct import is_direct, parse_direct
from .mutation import INSTALL, Mutation, Report, mutation
from .options import InstallOptions
from .resolve import check_skills_exist, locked_selection, resolve
from .session import Session


def install(session: Session, specs: list[str], opts: InstallOptions) -> Report:
    with mutation(session, INSTALL, opts) as m:
        if opts.frozen or not specs:
            m.restore(sorted(_group_specs(specs)))
        else:
            _resolve_specs(m, list(specs))
        m.commit()
    return m.report


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


def _resolve_specs(m: Mutation, specs: list[str]) -> None:
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
        if skills:  # the whole package is (or was) wanted: a typo'd skill still is not there
            check_skills_exist(pid, skills, set(plan.skills))
        for name in skills or ():  # named now (author/pkg/skill): the user wants it served
            plan.skills[name] = True
        m.apply(plan, existing, m.stage(plan))
    m.prune_registries()
