"""`ontoskills update [PKG...]`: move installed packages to what the registry has now."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import update
from ..install.options import InstallOptions
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation
from ._options import AllowDowngradeOpt, ForceOpt, MinTrustOpt, StrictOpt


def register(app: typer.Typer) -> None:
    @app.command("update")
    def update_cmd(
        ctx: typer.Context,
        packages: Annotated[list[str] | None, typer.Argument(help="author/pkg; none = all")] = None,
        force: ForceOpt = False,
        allow_trust_downgrade: AllowDowngradeOpt = False,
        min_trust: MinTrustOpt = None,
        strict: StrictOpt = False,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Update installed packages (refuses trust downgrades and clobbering your edits)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        opts = InstallOptions(
            min_trust=min_trust,
            force=force,
            allow_trust_downgrade=allow_trust_downgrade,
            strict=strict,
        )

        project = app_ctx.project
        if project is not None:  # the project's [policy] holds for what update resolves
            from ._project import check_lock_policy, policy_min_trust

            check_lock_policy(app_ctx)
            opts.min_trust = policy_min_trust(project, min_trust)
        run_mutation(app_ctx, lambda s: update(s, list(packages or []), opts), warm=True)
