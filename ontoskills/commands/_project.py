"""What the verbs that work on a project share (`add`, `sync`, and `install`, `ci`,
`remove` when a project is found): the project's wishes as install options, and an edit of
the manifest followed by a sync that puts the manifest back when the sync fails."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import UsageError
from ..install.mutation import Report
from ..install.options import InstallOptions
from ..install.session import Session
from ..install.sync import Desired
from ..project import Project
from ..registries import RegistryConfig
from ..safety import parse_spec
from ._context import AppContext
from ._mutation import run_mutation


@dataclass(frozen=True)
class Wanted:
    """One package `add` (or `install` in a project) declares: its skills ([] = the whole
    package), the registry it must come from, and `declare`: the `[registries.NAME]` keys to
    write for an Agent Skills repository named directly (github:, a URL, a path)."""

    package_id: str
    skills: tuple[str, ...] = ()
    registry: str | None = None
    declare: dict[str, str] | None = None


def wanted_specs(app: AppContext, specs: list[str], registry: str | None) -> list[Wanted]:
    """The specs of `add`/`install` grouped by package (npm/uv spellings: author/pkg,
    author/pkg/skill, github:owner/repo[/skill][#ref], a git URL, a path)."""
    from ..install.direct import is_direct

    declare, option = None, registry
    if registry is None and app.registry_override:  # `--registry LOCATION add ...`
        registry, declare = _override(app, app.registry_override)
    out: dict[str, Wanted] = {}
    for spec in specs:
        if is_direct(spec):
            if option is not None:
                raise UsageError(
                    f"--registry and {spec[:80]!r} both name where the package comes from",
                    hint="drop --registry: a github:/URL/path spec is its own registry",
                )
            want = _direct(app, spec)
        else:
            pid, skill = parse_spec(spec)
            want = Wanted(pid, (skill,) if skill else (), registry, declare)
        seen = out.get(want.package_id)
        if seen is not None and (seen.registry, seen.declare) != (want.registry, want.declare):
            raise UsageError(f"{want.package_id} is named from two places", hint="add it once")
        skills = want.skills
        if seen is not None:  # the whole package wins over some of its skills
            both = seen.skills and want.skills
            skills = tuple(sorted({*seen.skills, *want.skills})) if both else ()
        out[want.package_id] = replace(want, skills=skills)
    return list(out.values())


def _direct(app: AppContext, spec: str) -> Wanted:
    """A direct spec in a project: the registry its repository already has in the manifest
    or config.toml (same location), else a new `[registries.<owner>-<repo>]` of kind skills."""
    from ..install.direct import direct_spec
    from ..registries import RegistryKind, same_location

    project = app.project
    assert project is not None
    found = direct_spec(app.session_config, spec)
    known = app.desired().registries
    skills = (found.skill,) if found.skill else ()
    for name, reg in known.items():
        if same_location(reg.url, found.registry.url):
            return Wanted(found.package_id, skills, name)
    name = found.package_id.replace("/", "-")
    _free(app, known, name, spec, 'url, kind = "skills" and package_id')
    url = _manifest_url(app, found.registry.url)
    keys = {"url": url, "kind": str(RegistryKind.SKILLS.value), "package_id": found.package_id}
    return Wanted(found.package_id, skills, name, keys)


def _override(app: AppContext, value: str) -> tuple[str, dict[str, str] | None]:
    """`--registry NAME|URL|PATH` on `add` in a project: a declared name as it is; a location
    declared too (uv's `add --index` writes the index), so a fresh clone's next `sync` reads
    the same registry. It keeps the ad-hoc cap (`trust = "community"`): writing it down must
    not lift what the flag was allowed."""
    from ..config import ADHOC_TRUST
    from ..install.session import adhoc_location
    from ..registries import detect_kind, same_location, slug_for_url

    known = app.desired().registries
    if value in known:
        return value, None
    url = adhoc_location(value)
    for name, reg in known.items():
        if same_location(reg.url, url):
            return name, None
    name = slug_for_url(url)
    _free(app, known, name, value, "url")
    keys = {"url": _manifest_url(app, url), "kind": str(detect_kind(url).value)}
    return name, {**keys, "trust": ADHOC_TRUST}


def _free(
    app: AppContext, known: dict[str, RegistryConfig], name: str, spec: str, keys: str
) -> None:
    """Exit 2 when `name` already names another registry (nothing is written)."""
    if name in known:
        project = app.project
        assert project is not None
        raise UsageError(
            f"registry {name} already names {known[name].url[:120]}, not {spec[:120]}",
            hint=f"declare [registries.OTHER] with {keys} in {project.here.path}, then "
            "`ontoskills add PKG --registry OTHER`",
        )


def _manifest_url(app: AppContext, url: str) -> str:
    """A folder relative to the manifest (npm's `file:../x`), so a clone elsewhere, or a
    checkout beside its siblings, still finds it; a URL as it is."""
    if "://" in url or "@" in url:
        return url
    project = app.project
    assert project is not None
    rel = Path(os.path.relpath(url, project.here.path.parent)).as_posix()
    return rel if rel.startswith("../") else f"./{rel}"


def edit_manifest(wanted: list[Wanted]) -> Callable[[Path], bytes]:
    """The manifest edit that declares `wanted` (one write per package; the bytes before)."""

    def edit(manifest: Path) -> bytes:
        from .. import projectedit

        olds = [
            projectedit.add(
                manifest, [w.package_id], skills=list(w.skills), registry=w.registry,
                declare=w.declare,
            )
            for w in wanted
        ]  # fmt: skip
        return olds[0]

    return edit


def project_options(project: Project, opts: InstallOptions) -> InstallOptions:
    """`opts` with the manifest's `[embeddings]` folded in (`[policy]` is checked by
    install/sync.py itself, so its refusal names the rule, not a flag)."""
    emb = project.manifest.embeddings
    return replace(
        opts,
        with_embeddings=opts.with_embeddings or emb.enabled,
        model_path=opts.model_path or (None if emb.path is None else str(emb.path)),
    )


def run_sync(
    app: AppContext,
    opts: InstallOptions,
    *,
    clean: bool = False,
    edit: Callable[[Path], bytes] | None = None,
) -> None:
    """Sync the project (`clean`: `ci`); `edit(manifest) -> its old bytes` first, undone
    when the sync fails (a package that does not exist is not left in the manifest)."""
    from ..install.sync import sync
    from ..projectedit import write

    project = app.project
    assert project is not None
    target = project.here.path
    app.desired().check_registries()  # before the tree's lock creates anything (exit 2)
    if (opts.locked or opts.frozen or clean) and not project.lockfile.exists():
        # each installs the lock as written: with none there is nothing to install, and an
        # empty lock written here would read as "this project needs nothing" (cargo, uv)
        from ..errors import LockMissingError

        how = "ci" if clean else "--locked" if opts.locked else "--frozen"
        raise LockMissingError(
            f"no lock at {project.lockfile}; `{how}` installs the lock as written",
            hint="run `ontoskills sync` to write it, and commit it",
        )

    old: list[bytes] = []  # the manifest's bytes before the edit, once it is made

    def wanted() -> Desired:
        # called by sync under the project's lock (concurrent `add`s serialise their
        # read-modify-write of the manifest); an edit refused here writes nothing
        if edit is not None:
            old.append(edit(target))
            app.reset_project()  # read the edited manifest
        return app.desired()

    def action(session: Session) -> Report:
        try:
            return sync(session, wanted, project_options(project, opts), clean=clean)
        except BaseException:  # a failed sync puts the manifest's old bytes back
            if old:
                write(target, old[0])
            raise

    run_mutation(app, action, warm=True)


def check_lock_policy(app: AppContext) -> None:
    """The project's lock against its `[policy]` (serve: exit 4 naming rule and package)."""
    from ..install.sync import check_lock_policy as check
    from ..lockfile import load

    check(load(app.lockfile), app.desired())


def policy_min_trust(project: Project, flag: str | None) -> str | None:
    """The stricter of `--min-trust` and `[policy] min_trust` (update re-resolves through
    install/resolve.py, whose refusal is exit 4)."""
    from ..manifest import tier_rank

    policy = project.manifest.policy.min_trust
    if policy and (not flag or tier_rank(policy) > tier_rank(flag)):
        return policy
    return flag
