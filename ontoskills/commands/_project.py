"""What the verbs that work on a project share (`add`, `sync`, and `install`, `ci`,
`remove` when a project is found): the project's wishes as install options, and an edit of
the manifest followed by a sync that puts the manifest back when the sync fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..install.mutation import Report
from ..install.options import InstallOptions
from ..install.session import Session
from ..install.sync import Desired
from ..project import Project
from ._context import AppContext
from ._mutation import run_mutation


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
