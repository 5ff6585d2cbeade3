"""`ontoskills enable|disable TARGET...`: choose which installed skills are served."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import set_enabled
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation

Targets = Annotated[
    list[str], typer.Argument(help="author/pkg (all its skills) or author/pkg/skill")
]


def _toggle(ctx: typer.Context, targets: list[str], enabled: bool, json: bool, quiet: bool) -> None:
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    run_mutation(app_ctx, lambda s: set_enabled(s, targets, enabled))


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
