"""The one skeleton every mutating verb runs in: install, ci, update, remove, enable/disable.

    home + lockfile locks -> repair an interrupted transaction (and reference indexes a
    killed run left behind) -> load the lock -> the verb's changes,
    staged in one Transaction -> one atomic commit of tree + lockfile, or discard ->
    embeddings hooks -> reference indexes (system/index.*.ttl) -> linked agent skills
    folders (agentlink/, only when `link` left a record)

A verb only says what changes (`Mutation.stage` a plan then `apply` the decision install
and update share, `restore` locked packages, `drop` folders, edit `m.lock`) and commits;
any failure before the commit discards the staging and leaves the previous tree and lock
untouched. `Verb` says which hooks a command runs, in one table; the hooks are in hooks.py,
what a verb reports (`Change`, `Report`) in report.py.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .. import lockfile
from ..errors import LockOutdatedError, UsageError
from ..fsutil import sha256_bytes
from ..lockfile import LockedPackage, Lockfile, package_integrity, read_lock_bytes
from . import homelock
from .compat import (
    clear_reference_indexes_pending,
    mark_reference_indexes_pending,
    reference_indexes_pending,
)
from .decide import decide
from .fetch import PackageFetcher
from .hooks import (
    finish_embeddings,
    prepare_embeddings,
    refresh_links,
    refresh_reference_indexes,
)
from .journal import lock_sha
from .options import InstallOptions
from .report import Change, Report
from .resolve import PackagePlan, check_home_overlap, check_min_trust, plan_from_lock
from .session import Session, lock_registry_name
from .state import package_drift
from .transaction import Transaction, recover

MAX_DEPS_SHOWN = 10  # unresolved dependencies named in a package's one warning


@dataclass(frozen=True, kw_only=True)
class Verb:
    name: str
    reads_registries: bool = False  # the home must not overlap a local registry (CLI.md)
    lock_required: bool = True
    prepare_embeddings: bool = False  # model present and verified before the commit
    finish_embeddings: bool = False  # sample, derive, drop derived vectors after it


INSTALL = Verb(
    name="install",
    reads_registries=True,
    lock_required=False,
    prepare_embeddings=True,
    finish_embeddings=True,
)
CI = Verb(name="ci", reads_registries=True, prepare_embeddings=True, finish_embeddings=True)
UPDATE = Verb(
    name="update", reads_registries=True, prepare_embeddings=True, finish_embeddings=True
)
# remove drops the removed packages' derived vectors
REMOVE = Verb(name="remove", finish_embeddings=True)
ENABLE = Verb(name="enable")
DISABLE = Verb(name="disable")


class Mutation:
    """One verb's changes to the home: staged packages, folder swaps, the edited lock."""

    def __init__(
        self,
        session: Session,
        verb: Verb,
        opts: InstallOptions,
        report: Report,
        lock: Lockfile,
        lock_sha: str | None = None,
    ) -> None:
        """`lock`: the parsed lockfile this verb edits; `lock_sha`: the sha256 of its bytes
        (None: no lockfile), recorded in the transaction's journal."""
        self.session = session
        self.lock_sha = lock_sha
        self.verb = verb
        self.opts = opts
        self.report = report
        self.lock = lock
        self.before = lock.to_bytes(session.lockfile_path.parent)
        self.txn = Transaction(session.home)
        self.committed = False

    def stage(self, plan: PackagePlan) -> LockedPackage:
        """Fetch and verify a planned package into staging; its lock entry (unnamed registry)."""
        session = self.session
        _verify_signed(session, plan)
        src = session.source(plan.registry, pin=plan.commit)
        fetcher = PackageFetcher(
            src, session.cache, parallel=session.options.parallel, strict=self.opts.strict
        )
        session.reporter.stage(f"fetching {plan.package_id}", total=len(plan.files))
        records = fetcher.stage(
            plan, self.txn.stage_dir(plan.package_id), advance=session.reporter.advance
        )
        for warning in plan.warnings + fetcher.warnings:
            session.reporter.warn(warning)
        if plan.unresolved_deps:  # one line, however many: a hostile manifest has 10^6
            shown = ", ".join(plan.unresolved_deps[:MAX_DEPS_SHOWN])
            more = len(plan.unresolved_deps) - MAX_DEPS_SHOWN
            session.reporter.warn(
                f"{plan.package_id}: dependencies not in this package: {shown}"
                + (f" (+{more} more)" if more > 0 else "")
                + "; install them separately"
            )
        return LockedPackage(
            id=plan.package_id,
            version=plan.version,
            registry="",  # named when recorded in the lock
            trust_tier=plan.trust_tier,
            requested=sorted(set(plan.requested)),
            files=records,
            skills=plan.skills,
            with_embeddings=plan.with_embeddings,
            root=plan.package_root,
            commit=plan.commit,
        )

    def apply(self, plan: PackagePlan, existing: LockedPackage | None, new: LockedPackage) -> None:
        """Decide (decide.py, shared by install and update) what `new`, staged from `plan`,
        does to the installed `existing`, and do it: place it, keep the tree, or refuse."""
        home = self.session.home
        drift = package_drift(home, existing) if existing is not None else None
        decision = decide(existing, new, drift, self.opts, lockfile=self.session.lockfile_path)
        if decision.warning:
            self.session.reporter.warn(decision.warning)
        if decision.action == "unchanged":
            assert existing is not None
            self.report.changes.append(self._keep(existing, new))
        elif decision.places:
            self.record(plan, new)
            self.place(new.id)
            self.report.changes.append(Change.of(decision.action, new, existing, plan.opt_in))

    def _keep(self, existing: LockedPackage, new: LockedPackage) -> Change:
        """Same content, intact tree: nothing is placed. The lock entry takes what the user
        asked for now (requested specs, a skill named to be served); commit and registry stay."""
        new.commit, new.registry = existing.commit, existing.registry
        if new.requested != existing.requested or new.skills != existing.skills:
            self.lock.packages[new.id] = new
        turned_on = sorted(k for k, on in new.skills.items() if on and not existing.skills.get(k))
        if turned_on:  # `install author/pkg/skill` of an installed, disabled skill
            return Change(new.id, "enabled", new.version, skills=turned_on)
        return Change.of("unchanged", new)

    def restore(self, package_ids: list[str] | None = None, *, reinstall_all: bool = False) -> None:
        """Put locked packages (all, or `package_ids`) back exactly as locked: those whose
        tree is damaged (a file missing; an edited one only with --force, as `update` keeps
        it), or every one (`ci`, whose contract is a wiped tree). Nothing is resolved."""
        session, lock = self.session, self.lock
        if not lock.packages:
            raise UsageError(
                f"nothing to install: {session.lockfile_path} lists no packages",
                hint="name a package, e.g. `ontoskills install obra/superpowers`",
            )
        wanted = sorted(package_ids or lock.packages)
        missing = [p for p in wanted if p not in lock.packages]
        if missing:
            raise LockOutdatedError(
                f"{', '.join(missing)} not in {session.lockfile_path} "
                "(--frozen installs the lock as written)",
                hint="run `ontoskills install` without --frozen to add it to the lock",
            )
        for pid in wanted:
            pkg = lock.packages[pid]
            check_min_trust(pid, pkg.trust_tier, self.opts.min_trust)
            if not reinstall_all:  # the lock's own content: decide.py's "same content" rows
                decision = decide(pkg, pkg, package_drift(session.home, pkg), self.opts)
                if decision.warning:  # edited by the user: kept unless --force (as update)
                    session.reporter.warn(decision.warning)
                if decision.action != "reinstalled":
                    if decision.action == "unchanged":
                        self.report.changes.append(Change.of("unchanged", pkg))
                    continue
            if pkg.registry not in lock.registries:
                raise UsageError(
                    f"{session.lockfile_path}: {pid} names unknown registry {pkg.registry!r}"
                )
            new = self.stage(plan_from_lock(session, pkg, lock.registries[pkg.registry]))
            if new.integrity != package_integrity(pkg.files):  # each file was verified already
                raise AssertionError("verified files differ from the lock")
            # `ci` into an empty home (or a package whose folder is gone) installs it; only a
            # folder already there is reinstalled
            was_there = session.home.package_dir(pid).exists()
            self.place(pid)
            self.report.changes.append(Change.of("reinstalled" if was_there else "installed", pkg))

    def place(self, pid: str) -> None:
        """The staged folder of `pid` replaces the installed one at commit."""
        self.txn.replace(self.session.home.package_dir(pid), self.txn.stage_dir(pid))

    def drop(self, pid: str) -> None:
        """The installed folder of `pid` goes at commit."""
        self.txn.remove(self.session.home.package_dir(pid))

    def record(self, plan: PackagePlan, pkg: LockedPackage) -> None:
        """`pkg` (staged from `plan`) becomes the lock entry, under its registry's lock name."""
        name = lock_registry_name(self.lock, plan.registry)
        pkg.registry = name
        self.lock.registries[name] = plan.locked_registry(name)
        self.lock.packages[pkg.id] = pkg

    def prune_registries(self) -> None:
        used = {p.registry for p in self.lock.packages.values()}
        for name in list(self.lock.registries):
            if name not in used:
                del self.lock.registries[name]

    def commit(self, *, data: bytes | None = None) -> None:
        """Prepare embeddings (when the verb does), then swap the tree and write the lock
        (`data`: exact bytes, as `ci` keeps the committed lock; else `m.lock` serialised)."""
        if self.verb.prepare_embeddings:
            prepare_embeddings(
                self.session, self.lock, self.txn.dir / "new", self.opts.model_path
            )
        after = data if data is not None else self.lock.to_bytes(self.session.lockfile_path.parent)
        if self.opts.locked and after != self.before:
            raise LockOutdatedError(
                f"{self.session.lockfile_path} is out of date for this install (--locked)",
                hint="run `ontoskills install` without --locked and commit the new lock",
            )
        self.report.lock_changed = after != self.before
        self.txn.commit(self.session.lockfile_path, after, old_sha=self.lock_sha)
        self.committed = True
        if data is not None:  # `ci`: what is on disk now is these bytes
            self.lock = lockfile.from_bytes(data, self.session.lockfile_path)


@contextmanager
def mutation(
    session: Session, verb: Verb, opts: InstallOptions | None = None
) -> Iterator[Mutation]:
    """Run one verb's changes under the skeleton; the verb calls `m.commit()` (leaving
    without it discards, like any exception)."""
    if verb.reads_registries:
        check_home_overlap(session)
    report = Report(verb.name, session.lockfile_path)
    note = session.reporter.note
    try:
        with (
            homelock.hold(session.home, verb.name, on_wait=note),
            homelock.hold_lockfile(session.lockfile_path, on_wait=note),
        ):
            report.recovered = recover(session.home, session.lockfile_path)
            # A run killed after its commit but before both system/index.*.ttl were
            # rewritten (found by kill_loop.py's kill-at-a-rename iterations): the lock on
            # disk is the truth, so bring them in step before anything else.
            if reference_indexes_pending(session.home) and refresh_reference_indexes(session):
                report.recovered.append("rewrote system/index.*.ttl left behind by a killed run")
            for line in report.recovered:
                session.reporter.warn(line)
            # The lock is read once here and passed along (its sha256 for the journal and the
            # rollback check, the parsed copy the verb edits, the copy of what it said before).
            data = read_lock_bytes(session.lockfile_path)
            lock_before = None if data is None else sha256_bytes(data)
            mark_reference_indexes_pending(session.home)
            try:
                lock = lockfile.from_bytes(
                    data, session.lockfile_path, required=verb.lock_required
                )
                session.remember_lock(copy.deepcopy(lock))
                m = Mutation(session, verb, opts or InstallOptions(), report, lock, lock_before)
                try:
                    yield m
                finally:
                    if not m.committed:
                        m.txn.discard()
                on_disk = m.lock if m.committed else session.lock_at_start()
                report.embeddings = on_disk.embeddings is not None
                if verb.finish_embeddings:
                    finish_embeddings(session, on_disk)
                refresh_reference_indexes(session, on_disk)
                if m.committed:
                    refresh_links(session)
            except BaseException:
                if lock_sha(session.lockfile_path) == lock_before:  # nothing was committed
                    clear_reference_indexes_pending(session.home)
                raise
    finally:
        session.close()


def _verify_signed(session: Session, plan: PackagePlan) -> None:
    """Signed registries (docs/SECURITY.md), for every verb that stages a package: the
    registry's metadata is current and untampered and its root chains to the lock's root
    keys (ci and --frozen too), and every file of a resolved plan is pinned to its signed
    target, so what is fetched (a cache hit or a download) is what the maintainers signed.
    A plan from the lock keeps the lock's hashes: they were checked against signed targets
    when the lock was written, and the registry may have published newer files since."""
    from_lock = bool(plan.files) and all(f.from_lock for f in plan.files)
    exp = session.expectation(plan.registry)
    if from_lock and not (exp.expects_signed or exp.require_signed):
        return  # unsigned in the lock and config: the lock's hashes are the check, no probe
    opened = session.opened(plan.registry)  # refreshed once per command; raises per attack
    if from_lock or opened.root_keys is None:
        return
    from ..signing.client import VerifiedSource  # tuf is loaded already: the registry is signed

    assert isinstance(opened.source, VerifiedSource)
    root = plan.package_root
    for f in plan.files:
        f.sha256, f.size = opened.source.expect(
            f"{root}/{f.path}" if root else f.path, f.sha256, f.size
        )
