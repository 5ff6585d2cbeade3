"""`ontoskills ci`: reproduce the committed lockfile exactly, non-interactively."""

from __future__ import annotations

import typer

from ..install.lifecycle import ci
from ..install.options import InstallOptions
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation
from ._options import MinTrustOpt, StrictOpt


def register(app: typer.Typer) -> None:
    @app.command("ci")
    def ci_cmd(
        ctx: typer.Context,
        min_trust: MinTrustOpt = None,
        strict: StrictOpt = False,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Wipe the managed tree and install exactly what the lockfile says (lock required)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        opts = InstallOptions(min_trust=min_trust, frozen=True, strict=strict)

        run_mutation(app_ctx, lambda s: ci(s, opts), warm=True)
