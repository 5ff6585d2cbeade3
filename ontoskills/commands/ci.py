"""`ontoskills ci`: reproduce the committed lockfile exactly, non-interactively."""

from __future__ import annotations

import typer

from ..install.lifecycle import ci
from ..install.options import InstallOptions
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation
from ._options import MinTrustOpt, ModelOpt, StrictOpt
from ._project import run_sync


def register(app: typer.Typer) -> None:
    @app.command("ci")
    def ci_cmd(
        ctx: typer.Context,
        min_trust: MinTrustOpt = None,
        strict: StrictOpt = False,
        model: ModelOpt = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Wipe the managed tree and install exactly what the lockfile says (lock required).
        In a project the lock must also match ontoskills.toml (`sync --locked`, exit 3)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        if app_ctx.project is not None:
            opts = InstallOptions(min_trust=min_trust, strict=strict, model_path=model)
            run_sync(app_ctx, opts, clean=True)
            return
        opts = InstallOptions(min_trust=min_trust, frozen=True, strict=strict, model_path=model)

        run_mutation(app_ctx, lambda s: ci(s, opts), warm=True)
