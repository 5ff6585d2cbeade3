"""`ontoskills outdated`: which installed packages changed in their registry."""

from __future__ import annotations

import typer

from ..install.queries import Outdated, outdated
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run


def register(app: typer.Typer) -> None:
    @app.command("outdated")
    def outdated_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """Compare installed packages with their registry (version, content, trust)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Outdated:
            with out.reporter() as rep:
                return outdated(app_ctx.session(rep))

        def text(out: Output, report: Outdated) -> None:
            if not report.packages:
                out.info("no packages installed")
                return
            stale = [r for r in report.packages if r.status != "current"]
            if not stale:
                out.info("everything is up to date")
                return
            rows = []
            for r in stale:
                trust = r.trust_tier
                if r.changes is not None and r.latest_trust_tier != trust:
                    trust = f"{trust} -> {r.latest_trust_tier}"
                changed = ", ".join(r.changes if r.changes is not None else (r.status,))
                rows.append((r.package, r.version, r.latest_version or "-", trust, changed))
            out.table(("package", "installed", "latest", "trust", "changed"), rows)

        run(app_ctx, body, text)
