"""`sync` (and `add`, `remove`, `install`, `ci` inside a project): make the lock and the
project's tree match its manifest, in the one mutation skeleton (install/mutation.py).

The lock's `requested` specs say what each locked package already satisfies: a dependency
whose specs, registry, version and embeddings the lock already records is kept (its tree
restored if it drifted, nothing resolved); a new or changed one is resolved; a locked
package no manifest declares any more is removed. `--locked` (and `ci`) refuse, exit 3,
when the lock would change, naming the difference, before anything is fetched; `--frozen`
installs the lock as written. `[policy]` is checked against every package placed or kept:
a refusal is exit 4 naming the rule and the package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ConfigError, LockOutdatedError, TrustError
from ..lockfile import LockedPackage, Lockfile
from ..manifest import tier_rank
from ..project import Dependency, Policy
from ..registries import RegistryConfig, same_location
from .mutation import CI, Change, Mutation, Report, Verb, mutation
from .options import InstallOptions
from .resolve import PackagePlan, check_skills_exist, resolve
from .session import Session
from .state import installed_package_dirs

SYNC = Verb(
    name="sync",
    reads_registries=True,
    lock_required=False,
    prepare_embeddings=True,
    finish_embeddings=True,
)


@dataclass(frozen=True)
class Desired:
    """What the project's manifests ask for (project.Project, merged over a workspace)."""

    manifest: Path  # the root manifest, named in messages
    dependencies: dict[str, Dependency]
    policy: Policy = field(default_factory=Policy)
    with_embeddings: bool = False
    registries: dict[str, RegistryConfig] = field(default_factory=dict)  # every known name

    def registry_of(self, dep: Dependency) -> RegistryConfig | None:
        """The registry a dependency names (exit 2 when nothing declares it)."""
        if dep.registry is None:
            return None
        reg = self.registries.get(dep.registry)
        if reg is None:
            raise ConfigError(
                f"{dep.manifest}: dependencies.{dep.package_id}.registry names {dep.registry!r}, "
                "which is not declared",
                hint=f"declare it under [registries.{dep.registry}] in {dep.manifest}, or "
                "with `ontoskills registry add`",
            )
        return reg

    def check_registries(self) -> None:
        for dep in self.dependencies.values():
            self.registry_of(dep)


@dataclass(frozen=True)
class LockDiff:
    added: list[str]
    removed: list[str]
    changed: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def describe(self) -> str:
        parts = [
            f"{word} {', '.join(ids)}"
            for word, ids in (
                ("adds", self.added),
                ("removes", self.removed),
                ("changes", self.changed),
            )
            if ids
        ]
        return "; ".join(parts)


def satisfied(lock: Lockfile, pkg: LockedPackage, dep: Dependency, want: Desired) -> bool:
    """Whether the locked package is what the dependency asks for, as written now."""
    if sorted(pkg.requested) != dep.specs():
        return False
    if dep.version is not None and pkg.version != dep.version:
        return False
    if want.with_embeddings and not pkg.with_embeddings:
        return False
    reg = want.registry_of(dep)
    locked = lock.registries.get(pkg.registry)
    return reg is None or (locked is not None and same_location(locked.url, reg.url))


def diff(lock: Lockfile, want: Desired) -> LockDiff:
    deps = want.dependencies
    return LockDiff(
        added=sorted(p for p in deps if p not in lock.packages),
        removed=sorted(p for p in lock.packages if p not in deps),
        changed=sorted(
            p
            for p, dep in deps.items()
            if p in lock.packages and not satisfied(lock, lock.packages[p], dep, want)
        ),
    )


# ---------------------------------------------------------------------------- policy
def _refuse(rule: str, pid: str, why: str, manifest: Path) -> TrustError:
    return TrustError(
        f"policy {rule}: {pid} {why}",
        hint=f"choose another package or registry, or change [policy] {rule} in {manifest}",
    )


def check_policy(
    pid: str, tier: str, registry: RegistryConfig | None, url: str | None, want: Desired
) -> None:
    """One package placed or kept, against `[policy]` (exit 4 naming the rule)."""
    policy = want.policy
    if policy.min_trust and tier_rank(tier) < tier_rank(policy.min_trust):
        why = f"is '{tier}', below '{policy.min_trust}'"
        raise _refuse("min_trust", pid, why, want.manifest)
    allowed = policy.allowed_registries
    if allowed is None:
        return
    name = registry.name if registry is not None else None
    ok = name in allowed or any(
        url is not None and same_location(url, want.registries[a].url)
        for a in allowed
        if a in want.registries
    )
    if not ok:
        where = name or url or "an unknown registry"
        why = f"comes from {where}, not one of {', '.join(allowed) or 'no registry'}"
        raise _refuse("allowed_registries", pid, why, want.manifest)


def check_lock_policy(lock: Lockfile, want: Desired) -> None:
    """Every locked package against `[policy]` (ci, --frozen, serve)."""
    for pid, pkg in sorted(lock.packages.items()):
        locked = lock.registries.get(pkg.registry)
        reg = want.registries.get(pkg.registry)
        if reg is not None and locked is not None and not same_location(reg.url, locked.url):
            reg = None  # same name, another place: judged by its URL
        url = locked.url if locked is not None else None
        check_policy(pid, pkg.trust_tier, reg, url, want)


# ------------------------------------------------------------------------------ sync
def sync(
    session: Session,
    wanted: Callable[[], Desired],
    opts: InstallOptions,
    *,
    clean: bool = False,
) -> Report:
    """Bring the lock and tree to the manifest (`clean`: `ci`, a wiped tree from the lock,
    which must already match the manifest). `wanted()` reads the manifests under the
    project's lock, after the edit `add` or `remove` makes there: two of them at once
    serialise their read-modify-write of the manifest with the sync."""
    verb = CI if clean else SYNC
    with mutation(session, verb, opts) as m:
        want = wanted()
        if opts.with_embeddings and not want.with_embeddings:
            # `install/add --with-embeddings` in a project: the vectors for every dependency,
            # as `[embeddings] enabled` would give (the lock keeps them). Only for new ones, a
            # locked package was kept without them and the flag did nothing, silently.
            want = replace(want, with_embeddings=True)
        want.check_registries()
        if not opts.frozen:
            d = diff(m.lock, want)
            if d and (opts.locked or clean):
                raise LockOutdatedError(
                    f"{session.lockfile_path} does not match {want.manifest}: it {d.describe()}",
                    hint="run `ontoskills sync` and commit the new lock",
                )
        if opts.frozen or opts.locked or clean:
            _restore(m, want, clean)
        else:
            _converge(m, want)
    return m.report


def _restore(m: Mutation, want: Desired, clean: bool) -> None:
    check_lock_policy(m.lock, want)
    if m.lock.packages:
        m.restore(reinstall_all=clean)
    if clean:
        for pid in installed_package_dirs(m.session.home):
            if pid not in m.lock.packages:
                m.drop(pid)
                m.report.changes.append(Change(pid, "removed"))
        m.commit(data=m.before)
    else:
        m.commit()


def _converge(m: Mutation, want: Desired) -> None:
    d = diff(m.lock, want)
    for pid in d.removed:
        old = m.lock.packages.pop(pid)
        m.drop(pid)
        m.report.changes.append(Change(pid, "removed", previous_version=old.version))
    for pid in d.added + d.changed:
        _place(m, want, want.dependencies[pid])
    kept = [p for p in want.dependencies if p not in d.added and p not in d.changed]
    if kept:
        check_lock_policy(
            Lockfile(
                packages={p: m.lock.packages[p] for p in kept},
                registries=dict(m.lock.registries),
            ),
            want,
        )
        m.restore(sorted(kept))
    m.prune_registries()
    m.commit()


def _place(m: Mutation, want: Desired, dep: Dependency) -> None:
    """Resolve one new or changed dependency exactly as the manifest says."""
    session = m.session
    named = want.registry_of(dep)
    regs = [named] if named is not None else session.registries()
    allowed = want.policy.allowed_registries
    if named is not None:
        check_policy(dep.package_id, "official", named, named.url, _only_registries(want))
    elif allowed is not None:
        regs = [r for r in regs if r.name in allowed] or regs  # none left: refused below
    existing = m.lock.packages.get(dep.package_id)
    plan: PackagePlan = resolve(
        session,
        dep.package_id,
        skills=None if dep.skills is None else set(dep.skills),
        requested=dep.specs(),
        with_embeddings=want.with_embeddings or m.opts.with_embeddings,
        min_trust=m.opts.min_trust,
        existing=existing,
        registries=regs,
    )
    check_policy(dep.package_id, plan.trust_tier, plan.registry, plan.registry.url, want)
    if dep.version is not None and plan.version != dep.version:
        raise ConfigError(
            f"{dep.manifest}: dependencies.{dep.package_id}.version is {dep.version!r}, "
            f"the registry {plan.registry.name} has {plan.version}",
            hint="a registry serves one version of a package; remove `version` or change it",
        )
    if dep.skills is not None:
        check_skills_exist(dep.package_id, set(dep.skills), set(plan.skills))
        for name in dep.skills:
            plan.skills[name] = True
    m.apply(plan, existing, m.stage(plan))


def _only_registries(want: Desired) -> Desired:
    """`want` judging only where a package comes from (its tier is judged once resolved)."""
    policy = Policy(allowed_registries=want.policy.allowed_registries)
    return Desired(want.manifest, want.dependencies, policy, registries=want.registries)
