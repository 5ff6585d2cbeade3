"""ci, update, remove, enable/disable: the other mutating verbs, in the same skeleton as
install (install/mutation.py) and, for update, the same per-package decision (decide.py)."""

from __future__ import annotations

from ..errors import NotFoundError, UsageError
from ..safety import parse_spec
from .mutation import CI, DISABLE, ENABLE, REMOVE, UPDATE, Change, Report, mutation
from .options import InstallOptions
from .resolve import locked_selection, resolve
from .session import Session
from .state import installed_package_dirs


def ci(session: Session, opts: InstallOptions) -> Report:
    """Reproduce the lock exactly in a wiped managed tree; never resolves anything."""
    with mutation(session, CI, opts) as m:
        if m.lock.packages:
            m.restore(reinstall_all=True)
        for pid in installed_package_dirs(session.home):
            if pid not in m.lock.packages:
                m.drop(pid)
                m.report.changes.append(Change(pid, "removed"))
        m.commit(data=m.before)  # the committed lock, byte for byte
    return m.report


def update(session: Session, package_ids: list[str], opts: InstallOptions) -> Report:
    with mutation(session, UPDATE, opts) as m:
        lock = m.lock
        # once each: a package named twice was staged twice, and the second staging failed
        # "cannot create 'package.json' (File exists)" with a hint blaming the registry
        targets = list(dict.fromkeys(package_ids)) or sorted(lock.packages)
        unknown = [p for p in targets if p not in lock.packages]
        if unknown:  # worded as remove, enable and info say it
            raise NotFoundError(
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not installed",
                hint="see `ontoskills list`",
            )
        for pid in targets:
            old = lock.packages[pid]
            locked_reg = lock.registries.get(old.registry)
            regs = (
                [session.registry_for_lock(locked_reg)]
                if locked_reg is not None and not session.registry_override
                else None
            )
            plan = resolve(
                session,
                pid,
                skills=locked_selection(old),
                requested=old.requested,
                with_embeddings=old.with_embeddings or opts.with_embeddings,
                min_trust=opts.min_trust,
                existing=old,
                registries=regs,
            )
            m.apply(plan, old, m.stage(plan))
        m.prune_registries()
        m.commit()
    return m.report


def remove(session: Session, package_ids: list[str]) -> Report:
    with mutation(session, REMOVE) as m:
        for spec in package_ids:
            pid, skill = parse_spec(spec)
            if skill is not None:
                raise UsageError(
                    f"remove works on packages; to stop serving one skill use "
                    f"`ontoskills disable {spec}`"
                )
            if any(c.package_id == pid for c in m.report.changes):
                continue  # named twice (`remove a/b a/b`): removed once, not "not installed"
            if pid not in m.lock.packages:
                raise NotFoundError(f"{pid} is not installed", hint="see `ontoskills list`")
            old = m.lock.packages.pop(pid)
            m.drop(pid)
            m.report.changes.append(Change(pid, "removed", previous_version=old.version))
        m.prune_registries()
        m.commit()
    return m.report


def set_enabled(session: Session, targets: list[str], enabled: bool) -> Report:
    with mutation(session, ENABLE if enabled else DISABLE) as m:
        for spec in targets:
            pid, skill = parse_spec(spec)
            pkg = m.lock.packages.get(pid)
            if pkg is None:
                raise NotFoundError(f"{pid} is not installed", hint="see `ontoskills list`")
            names = [skill] if skill else sorted(pkg.skills)
            for name in names:
                if name not in pkg.skills:
                    raise NotFoundError(
                        f"{pid} has no installed skill {name}",
                        hint=f"installed: {', '.join(sorted(pkg.skills))}",
                    )
            # a skill already in the asked state is reported as such ("already disabled"),
            # not as if this command had changed it
            same = [n for n in names if pkg.skills[n] == enabled]
            changed = [n for n in names if pkg.skills[n] != enabled]
            for name in changed:
                pkg.skills[name] = enabled
            if changed:
                action = "enabled" if enabled else "disabled"
                m.report.changes.append(Change(pid, action, pkg.version, skills=changed))
            if same:
                m.report.changes.append(Change(pid, "unchanged", pkg.version, skills=same))
        m.commit()
    return m.report
