"""`ontoskills show author/pkg/skill`: one skill's full context (what the MCP tool returns)."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from .search import VerifyOpt, open_service, report_problems


def register(app: typer.Typer) -> None:
    @app.command("show")
    def show_cmd(
        ctx: typer.Context,
        skill: Annotated[str, typer.Argument(help="author/pkg/skill (or a skill id / IRI).")],
        verify: VerifyOpt = "full",
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Show a skill's full context: intents, knowledge, workflows, sections, files."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> None:
            service = open_service(app_ctx, verify)
            report_problems(out, service)
            context = service.context(skill)
            if app_ctx.json:
                out.json(context.to_json())
            else:
                out.stdout(context.render())

        run(app_ctx, body)
