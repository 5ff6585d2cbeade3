"""`ontoskills enable|disable TARGET...`: choose which installed skills are served."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import set_enabled
from ..install.mutation import Report
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from .install import render_report

Targets = Annotated[
    list[str], typer.Argument(help="author/pkg (all its skills) or author/pkg/skill")
]


def _toggle(ctx: typer.Context, targets: list[str], enabled: bool, json: bool, quiet: bool) -> None:
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Report:
        with out.reporter() as rep:
            return set_enabled(app_ctx.session(rep), targets, enabled)

    run(app_ctx, body, render_report)


def register(app: typer.Typer) -> None:
    @app.command("enable")
    def enable_cmd(
        ctx: typer.Context, targets: Targets, json: JsonOpt = False, quiet: QuietOpt = False
    ) -> None:
        """Serve these skills again (search and MCP)."""
        _toggle(ctx, targets, True, json, quiet)

    @app.command("disable")
    def disable_cmd(
        ctx: typer.Context, targets: Targets, json: JsonOpt = False, quiet: QuietOpt = False
    ) -> None:
        """Keep these skills installed but stop serving them."""
        _toggle(ctx, targets, False, json, quiet)
