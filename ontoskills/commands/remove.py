"""`ontoskills remove PKG...`: uninstall packages atomically."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import remove
from ..install.mutation import Report
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from .install import render_report


def register(app: typer.Typer) -> None:
    @app.command("remove")
    def remove_cmd(
        ctx: typer.Context,
        packages: Annotated[list[str], typer.Argument(help="author/pkg")],
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Remove installed packages and their lock entries."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Report:
            with out.reporter() as rep:
                return remove(app_ctx.session(rep), packages)

        run(app_ctx, body, render_report)
