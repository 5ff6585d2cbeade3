"""`ontoskills remove PKG...`: uninstall packages atomically."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import remove
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation


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

        run_mutation(app_ctx, lambda s: remove(s, packages))
