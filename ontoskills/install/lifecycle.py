"""ci, update, remove, enable/disable: the other mutating operations on an installed home.

They share install's machinery (operations.py): the home lock, recovery, staging, policies
and one atomic commit of tree + lockfile.
"""

from __future__ import annotations

from ..errors import NotFoundError, UsageError
from ..lockfile import load
from ..safety import parse_spec
from .operations import (
    Change,
    InstallOptions,
    Planner,
    Report,
    add_to_lock,
    embeddings_after_commit,
    embeddings_before_commit,
    guard_update,
    locked_home,
    locked_selection,
    prune_registries,
    same_content,
    sync_from_lock,
    tree_state,
)
from .resolve import resolve
from .session import Session
from .state import installed_package_dirs
from .transaction import Transaction


def ci(session: Session, opts: InstallOptions) -> Report:
    """Reproduce the lock exactly in a wiped managed tree; never resolves anything."""
    with locked_home(session, "ci") as report:
        lock = load(session.lockfile_path, required=True)
        data = lock.to_bytes(session.lockfile_path.parent)
        txn = Transaction(session.home)
        try:
            planner = Planner(session, opts, txn)
            if lock.packages:
                sync_from_lock(session, lock, [], opts, planner, report, reinstall_all=True)
            for pid in installed_package_dirs(session.home):
                if pid not in lock.packages:
                    txn.remove(session.home.package_dir(pid))
                    report.changes.append(Change(pid, "removed"))
            embeddings_before_commit(session, lock, opts, txn, report)  # lock bytes stay `data`
            txn.commit(session.lockfile_path, data)
        except BaseException:
            txn.discard()
            raise
        embeddings_after_commit(session, report)
        return report


def update(session: Session, package_ids: list[str], opts: InstallOptions) -> Report:
    with locked_home(session, "update") as report:
        lock = load(session.lockfile_path, required=True)
        targets = package_ids or sorted(lock.packages)
        unknown = [p for p in targets if p not in lock.packages]
        if unknown:
            raise NotFoundError(
                f"not installed: {', '.join(unknown)}", hint="see `ontoskills list`"
            )
        before = lock.to_bytes(session.lockfile_path.parent)
        txn = Transaction(session.home)
        try:
            planner = Planner(session, opts, txn)
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
                new = planner.stage(plan)
                same = same_content(old, new)
                if same:  # nothing new upstream: repair the tree exactly as install does
                    state = tree_state(session, old, opts, report)
                    if state == "intact":
                        report.changes.append(Change.of("unchanged", new))
                    if state != "damaged":
                        continue
                else:
                    guard_update(session, old, new, opts)
                add_to_lock(lock, plan, new)
                lock.packages[pid] = new
                txn.replace(session.home.package_dir(pid), txn.stage_dir(pid))
                report.changes.append(Change.of("reinstalled" if same else "updated", new, old))
            prune_registries(lock)
            embeddings_before_commit(session, lock, opts, txn, report)
            after = lock.to_bytes(session.lockfile_path.parent)
            report.lock_changed = after != before
            txn.commit(session.lockfile_path, after)
        except BaseException:
            txn.discard()
            raise
        embeddings_after_commit(session, report)
        return report


def remove(session: Session, package_ids: list[str]) -> Report:
    with locked_home(session, "remove") as report:
        lock = load(session.lockfile_path, required=True)
        txn = Transaction(session.home)
        try:
            for spec in package_ids:
                pid, skill = parse_spec(spec)
                if skill is not None:
                    raise UsageError(
                        f"remove works on packages; to stop serving one skill use "
                        f"`ontoskills disable {spec}`"
                    )
                if pid not in lock.packages:
                    raise NotFoundError(f"{pid} is not installed", hint="see `ontoskills list`")
                old = lock.packages.pop(pid)
                txn.remove(session.home.package_dir(pid))
                report.changes.append(Change(pid, "removed", previous_version=old.version))
            prune_registries(lock)
            report.lock_changed = True
            txn.commit(session.lockfile_path, lock.to_bytes(session.lockfile_path.parent))
        except BaseException:
            txn.discard()
            raise
        embeddings_after_commit(session, report)  # drops the removed packages' derived vectors
        return report


def set_enabled(session: Session, targets: list[str], enabled: bool) -> Report:
    with locked_home(session, "enable" if enabled else "disable") as report:
        lock = load(session.lockfile_path, required=True)
        for spec in targets:
            pid, skill = parse_spec(spec)
            pkg = lock.packages.get(pid)
            if pkg is None:
                raise NotFoundError(f"{pid} is not installed", hint="see `ontoskills list`")
            names = [skill] if skill else sorted(pkg.skills)
            for name in names:
                if name not in pkg.skills:
                    raise NotFoundError(
                        f"{pid} has no installed skill {name}",
                        hint=f"installed: {', '.join(sorted(pkg.skills))}",
                    )
                pkg.skills[name] = enabled
            report.changes.append(
                Change(pid, "enabled" if enabled else "disabled", pkg.version, skills=names)
            )
        txn = Transaction(session.home)
        report.lock_changed = True
        txn.commit(session.lockfile_path, lock.to_bytes(session.lockfile_path.parent))
        return report
