"""`ontoskills remove PKG...`: uninstall packages atomically."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.lifecycle import remove
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation
from ._project import run_sync


def register(app: typer.Typer) -> None:
    @app.command("remove")
    def remove_cmd(
        ctx: typer.Context,
        packages: Annotated[list[str], typer.Argument(help="author/pkg")],
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Remove installed packages and their lock entries (in a project, also from the
        nearest ontoskills.toml)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        if app_ctx.project is not None:
            from .. import projectedit
            from ..install.options import InstallOptions
            from ..safety import parse_spec

            ids = [parse_spec(p)[0] for p in packages]
            run_sync(app_ctx, InstallOptions(), edit=lambda path: projectedit.remove(path, ids))
            return
        run_mutation(app_ctx, lambda s: remove(s, packages))
