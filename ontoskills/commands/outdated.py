"""`ontoskills outdated`: which installed packages changed in their registry."""

from __future__ import annotations

import typer

from ..install.queries import outdated
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc


def register(app: typer.Typer) -> None:
    @app.command("outdated")
    def outdated_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """Compare installed packages with their registry (version, content, trust)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            with out.reporter() as rep:
                return Doc({"packages": outdated(app_ctx.session(rep))})

        def text(out: Output, doc: Doc) -> None:
            rows = doc.payload["packages"]
            stale = [r for r in rows if r["status"] != "current"]
            if not stale:
                out.info("everything is up to date")
                return
            rows = []
            for r in stale:
                trust = r["trust_tier"]
                if r.get("latest_trust_tier", trust) != trust:
                    trust = f"{trust} -> {r['latest_trust_tier']}"
                rows.append(
                    (
                        r["package"],
                        r["version"],
                        r.get("latest_version", "-"),
                        trust,
                        ", ".join(r.get("changes", [r["status"]])),
                    )
                )
            out.table(("package", "installed", "latest", "trust", "changed"), rows)

        run(app_ctx, body, text)
