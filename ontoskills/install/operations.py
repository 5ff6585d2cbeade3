"""The mutating operations: install, ci, update, remove, enable/disable.

Each one: take the home lock -> repair interrupted transactions -> plan -> fetch and verify
into staging -> check policies (trust, --locked, local edits) -> one atomic commit of tree +
lockfile. Any failure before the commit leaves the previous tree and lock untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import (
    LocalChangesError,
    LockOutdatedError,
    OntoskillsError,
    TrustError,
    UsageError,
)
from ..lockfile import LockedPackage, Lockfile, load, package_integrity
from ..manifest import tier_rank
from ..safety import parse_spec
from . import homelock
from .compat import (
    clear_reference_indexes_pending,
    mark_reference_indexes_pending,
    reference_indexes_pending,
    write_reference_indexes,
)
from .fetch import PackageFetcher
from .journal import lock_sha
from .resolve import (
    PackagePlan,
    check_home_overlap,
    check_min_trust,
    check_skills_exist,
    plan_from_lock,
    resolve,
)
from .session import Session, lock_registry_name
from .state import describe, package_drift
from .transaction import Transaction, recover


@dataclass
class InstallOptions:
    with_embeddings: bool = False
    min_trust: str | None = None
    locked: bool = False
    frozen: bool = False
    strict: bool = False
    force: bool = False
    allow_trust_downgrade: bool = False
    model_path: str | None = None  # install --model PATH: a local encoder folder


@dataclass
class Change:
    package_id: str
    action: str  # added | updated | reinstalled | unchanged | removed | enabled | disabled
    version: str | None = None
    previous_version: str | None = None
    trust_tier: str | None = None
    files: int = 0
    skills: list[str] = field(default_factory=list)
    # Installed but not served (the package ships them opt-in, or the user disabled them),
    # and the command that serves them: search and the MCP tool do not see them until then.
    disabled: list[str] = field(default_factory=list)
    enable: str | None = None

    @classmethod
    def of(cls, action: str, pkg: LockedPackage, previous: LockedPackage | None = None) -> Change:
        """A change that leaves `pkg` in the lock (what the CLI reports per package)."""
        off = sorted(k for k, on in pkg.skills.items() if not on)
        whole = bool(off) and len(off) == len(pkg.skills)
        targets = [pkg.id] if whole else [f"{pkg.id}/{k}" for k in off]
        return cls(
            pkg.id,
            action,
            pkg.version,
            previous.version if previous else None,
            pkg.trust_tier,
            len(pkg.files),
            sorted(pkg.skills),
            off,
            "ontoskills enable " + " ".join(targets) if off else None,
        )


@dataclass
class Report:
    changes: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    lock_changed: bool = False


@contextmanager
def locked_home(session: Session, command: str) -> Iterator[Report]:
    report = Report()
    if command in ("install", "update", "ci"):  # they read registries (docs/CLI.md)
        check_home_overlap(session)
    with (
        homelock.hold(session.home, command, on_wait=session.reporter.note),
        homelock.hold_lockfile(session.lockfile_path, on_wait=session.reporter.note),
    ):
        report.recovered = recover(session.home, session.lockfile_path)
        # A run killed after its commit but before both system/index.*.ttl were rewritten
        # (found by kill_loop.py's kill-at-a-rename iterations): the lock on disk is the
        # truth, so bring them in step before anything else.
        if reference_indexes_pending(session.home) and _refresh_reference_indexes(session, report):
            report.recovered.append("rewrote system/index.*.ttl left behind by a killed run")
        for line in report.recovered:
            session.reporter.warn(line)
        lock_before = lock_sha(session.lockfile_path)
        mark_reference_indexes_pending(session.home)
        try:
            yield report
            _refresh_reference_indexes(session, report)
        except BaseException:
            if lock_sha(session.lockfile_path) == lock_before:  # nothing was committed
                clear_reference_indexes_pending(session.home)
            raise
        finally:
            session.close()


def _refresh_reference_indexes(session: Session, report: Report) -> bool:
    """Keep system/index.*.ttl in step with the lock (best effort: a warning on failure).
    True when a file was rewritten."""
    try:
        return write_reference_indexes(session.home, load(session.lockfile_path))
    except (OSError, OntoskillsError) as exc:
        report.warnings.append(f"could not refresh system/index.enabled.ttl: {exc}")
        return False


def embeddings_before_commit(
    session: Session, lock: Lockfile, opts: InstallOptions, txn: Transaction, report: Report
) -> None:
    """Model present and verified, staged vectors compatible; records [embeddings] in lock."""
    if not (opts.model_path or any(p.with_embeddings for p in lock.packages.values())):
        return
    from ..embeddings import sync as embeddings_sync  # numpy & co. only when needed

    staged = {p: txn.dir / "new" / p for p in lock.packages if (txn.dir / "new" / p).is_dir()}
    report.warnings += embeddings_sync.prepare(
        session.home,
        session.config,
        lock,
        offline=session.options.offline,
        model_path=opts.model_path,
        package_dirs=staged,
        reporter=session.reporter,
        cache_dir=session.cache.root,
    )


def embeddings_after_commit(session: Session, report: Report) -> None:
    """Sample-check stored vectors, derive missing ones, drop derived data of removed packages."""
    lock = load(session.lockfile_path)
    if lock.embeddings is None and not (session.home.derived_dir / "vectors").is_dir():
        return
    from ..embeddings import sync as embeddings_sync

    report.warnings += embeddings_sync.finish(
        session.home,
        session.config,
        lock,
        reporter=session.reporter,
        cache_dir=session.cache.root,
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


def locked_selection(pkg: LockedPackage) -> set[str] | None:
    """The skills a locked package was installed with (None: the whole package)."""
    if any(r.count("/") == 1 for r in pkg.requested):
        return None
    return set(pkg.skills)


def _wanted(existing: LockedPackage | None, new: set[str] | None) -> set[str] | None:
    if new is None or existing is None:
        return new
    previous = locked_selection(existing)
    return None if previous is None else new | previous


class Planner:
    """Stages plans and turns them into lock entries, shared by install/update/ci."""

    def __init__(self, session: Session, opts: InstallOptions, txn: Transaction) -> None:
        self.session = session
        self.opts = opts
        self.txn = txn

    def stage(self, plan: PackagePlan) -> LockedPackage:
        src = self.session.source(plan.registry, pin=plan.commit)
        fetcher = PackageFetcher(
            src, self.session.cache, parallel=self.session.options.parallel, strict=self.opts.strict
        )
        self.session.reporter.stage(f"fetching {plan.package_id}", total=len(plan.files))
        records = fetcher.stage(
            plan, self.txn.stage_dir(plan.package_id), advance=self.session.reporter.advance
        )
        for warning in plan.warnings + fetcher.warnings:
            self.session.reporter.warn(warning)
        for dep in plan.unresolved_deps:
            self.session.reporter.warn(
                f"{plan.package_id}: dependency {dep} is not in this package; install it separately"
            )
        return LockedPackage(
            id=plan.package_id,
            version=plan.version,
            registry="",  # named when added to the lock
            trust_tier=plan.trust_tier,
            requested=sorted(set(plan.requested)),
            files=records,
            skills=plan.skills,
            with_embeddings=plan.with_embeddings,
            root=plan.package_root,
            commit=plan.commit,
        )


def add_to_lock(lock: Lockfile, plan: PackagePlan, pkg: LockedPackage) -> None:
    name = lock_registry_name(lock, plan.registry)
    pkg.registry = name
    lock.registries[name] = plan.locked_registry(name)


def prune_registries(lock: Lockfile) -> None:
    used = {p.registry for p in lock.packages.values()}
    for name in list(lock.registries):
        if name not in used:
            del lock.registries[name]


def same_content(a: LockedPackage | None, b: LockedPackage) -> bool:
    return a is not None and a.integrity == b.integrity and a.trust_tier == b.trust_tier


def guard_update(
    session: Session, old: LockedPackage, new: LockedPackage, opts: InstallOptions
) -> None:
    if tier_rank(new.trust_tier) < tier_rank(old.trust_tier) and not opts.allow_trust_downgrade:
        raise TrustError(
            f"{old.id} would go from '{old.trust_tier}' to '{new.trust_tier}' in its registry",
            hint="pass --allow-trust-downgrade if you accept the lower tier",
        )
    drift = package_drift(session.home, old)
    if drift.user_changes and not opts.force:
        raise LocalChangesError(
            f"{old.id} has local changes ({describe(drift)})",
            hint="back them up, then re-run with --force to overwrite them",
        )


def tree_state(session: Session, pkg: LockedPackage, opts: InstallOptions, report: Report) -> str:
    """For a package whose published content equals its lock entry, what to do with the
    installed folder: "intact" (nothing), "kept" (the user edited it; left as is with a
    warning unless --force) or "damaged" (files missing or modes changed, or --force over
    edits: re-placed). install and update share it, so both repair a tree the same way."""
    drift = package_drift(session.home, pkg)
    if drift.clean:
        return "intact"
    if drift.user_changes and not opts.force:
        report.warnings.append(
            f"{pkg.id}: left as is, it has local changes ({describe(drift)}); "
            "--force restores the published files"
        )
        return "kept"
    return "damaged"


def install(session: Session, specs: list[str], opts: InstallOptions) -> Report:
    with locked_home(session, "install") as report:
        lock = load(session.lockfile_path)
        before = lock.to_bytes(session.lockfile_path.parent)
        txn = Transaction(session.home)
        try:
            planner = Planner(session, opts, txn)
            if opts.frozen or not specs:
                sync_from_lock(session, lock, specs, opts, planner, report)
            else:
                _resolve_specs(session, lock, specs, opts, planner, report)
            embeddings_before_commit(session, lock, opts, txn, report)
            after = lock.to_bytes(session.lockfile_path.parent)
            if opts.locked and after != before:
                raise LockOutdatedError(
                    f"{session.lockfile_path} is out of date for this install (--locked)",
                    hint="run `ontoskills install` without --locked and commit the new lock",
                )
            report.lock_changed = after != before
            txn.commit(session.lockfile_path, after)
        except BaseException:
            txn.discard()
            raise
        embeddings_after_commit(session, report)
        return report


def _resolve_specs(
    session: Session,
    lock: Lockfile,
    specs: list[str],
    opts: InstallOptions,
    planner: Planner,
    report: Report,
) -> None:
    for pid, skills in _group_specs(specs).items():
        existing = lock.packages.get(pid)
        wanted = _wanted(existing, skills)
        requested = sorted(
            set((existing.requested if existing else []) + [s for s in specs if s.startswith(pid)])
        )
        plan = resolve(
            session,
            pid,
            skills=wanted,
            requested=requested,
            with_embeddings=opts.with_embeddings or bool(existing and existing.with_embeddings),
            min_trust=opts.min_trust,
            existing=existing,
        )
        if skills:  # the whole package is (or was) wanted: a typo'd skill still is not there
            check_skills_exist(pid, skills, set(plan.skills))
        for name in skills or ():  # named now (author/pkg/skill): the user wants it served
            plan.skills[name] = True
        new = planner.stage(plan)
        same = same_content(existing, new)
        state = tree_state(session, existing, opts, report) if same else None  # type: ignore[arg-type]
        if state == "intact":
            assert existing is not None
            new.commit, new.registry = existing.commit, existing.registry
            if new.requested != existing.requested or new.skills != existing.skills:
                lock.packages[pid] = new
            turned_on = sorted(
                k for k, on in new.skills.items() if on and not existing.skills.get(k)
            )
            if turned_on:  # `install author/pkg/skill` of an installed, disabled skill
                report.changes.append(Change(pid, "enabled", new.version, skills=turned_on))
            else:
                report.changes.append(Change.of("unchanged", new))
            continue
        if state == "kept":
            continue
        if opts.locked and not same:  # a repair of the same content leaves the lock as it is
            why = "is not in it" if existing is None else "changed in its registry"
            raise LockOutdatedError(
                f"{session.lockfile_path} is out of date: {pid} {why} (--locked)",
                hint="run `ontoskills install` without --locked and commit the new lock",
            )
        if existing is not None and not same:
            guard_update(session, existing, new, opts)
        add_to_lock(lock, plan, new)
        lock.packages[pid] = new
        planner.txn.replace(session.home.package_dir(pid), planner.txn.stage_dir(pid))
        action = (
            "added"
            if existing is None
            else ("reinstalled" if same_content(existing, new) else "updated")
        )
        report.changes.append(Change.of(action, new, existing))
    prune_registries(lock)


def sync_from_lock(
    session: Session,
    lock: Lockfile,
    specs: list[str],
    opts: InstallOptions,
    planner: Planner,
    report: Report,
    *,
    reinstall_all: bool = False,
) -> None:
    if not lock.packages:
        raise UsageError(
            f"nothing to install: {session.lockfile_path} lists no packages",
            hint="name a package, e.g. `ontoskills install obra/superpowers`",
        )
    wanted = sorted(lock.packages)
    if specs:
        wanted = sorted(_group_specs(specs))
        missing = [p for p in wanted if p not in lock.packages]
        if missing:
            raise LockOutdatedError(
                f"{', '.join(missing)} not in {session.lockfile_path} "
                "(--frozen installs the lock as written)",
                hint="run `ontoskills install` without --frozen to add it to the lock",
            )
    for pid in wanted:
        pkg = lock.packages[pid]
        check_min_trust(pid, pkg.trust_tier, opts.min_trust)
        if not reinstall_all and package_drift(session.home, pkg).clean:
            report.changes.append(Change.of("unchanged", pkg))
            continue
        if pkg.registry not in lock.registries:
            raise UsageError(
                f"{session.lockfile_path}: {pid} names unknown registry {pkg.registry!r}"
            )
        plan = plan_from_lock(session, pkg, lock.registries[pkg.registry])
        new = planner.stage(plan)
        if new.integrity != package_integrity(pkg.files):  # fetcher verified each file already
            raise AssertionError("verified files differ from the lock")
        planner.txn.replace(session.home.package_dir(pid), planner.txn.stage_dir(pid))
        report.changes.append(Change.of("reinstalled", pkg))
