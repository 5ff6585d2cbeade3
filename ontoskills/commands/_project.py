"""What the verbs that work on a project share (`add`, `sync`, and `install`, `ci`,
`remove` when a project is found): the project's wishes as install options, and an edit of
the manifest followed by a sync that puts the manifest back when the sync fails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..install.mutation import Report
from ..install.options import InstallOptions
from ..install.session import Session
from ..project import Project
from ._context import AppContext
from ._mutation import run_mutation


def project_options(project: Project, opts: InstallOptions) -> InstallOptions:
    """`opts` with the manifest's `[embeddings]` folded in (`[policy]` is checked by
    install/sync.py itself, so its refusal names the rule, not a flag)."""
    emb = project.manifest.embeddings
    return InstallOptions(
        with_embeddings=opts.with_embeddings or emb.enabled,
        min_trust=opts.min_trust,
        locked=opts.locked,
        frozen=opts.frozen,
        strict=opts.strict,
        force=opts.force,
        allow_trust_downgrade=opts.allow_trust_downgrade,
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

    def action(session: Session) -> Report:
        # inside the command's error contract (one line + hint, --json): an edit refused
        # here writes nothing; a sync that fails puts the manifest's old bytes back
        old = edit(target) if edit is not None else None
        try:
            if old is not None:
                app.reset_project()  # read the edited manifest
            current = app.project
            assert current is not None
            return sync(session, app.desired(), project_options(current, opts), clean=clean)
        except BaseException:
            if old is not None:
                write(target, old)
            raise

    run_mutation(app, action, warm=True)


def check_lock_policy(app: AppContext) -> None:
    """The project's lock against its `[policy]` (serve: exit 4 naming rule and package)."""
    from ..install.sync import check_lock_policy as check
    from ..lockfile import load

    check(load(app.lockfile), app.desired())
