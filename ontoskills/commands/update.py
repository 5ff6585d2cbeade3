"""`ontoskills update [PKG...]`: move installed packages to what the registry has now."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import update
from ..install.mutation import Report
from ..install.options import InstallOptions
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from .install import (
    AllowDowngradeOpt,
    ForceOpt,
    MinTrustOpt,
    StrictOpt,
    render_report,
    warm_search_index,
)


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

        def body(out: Output) -> Report:
            with out.reporter() as rep:
                report = update(app_ctx.session(rep), list(packages or []), opts)
                warm_search_index(app_ctx, report, rep)
                return report

        run(app_ctx, body, render_report)
