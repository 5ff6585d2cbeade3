"""`ontoskills show author/pkg/skill`: one skill's full context, for humans.

`show KEY#part` prints one part whole (the ids are those the MCP tool's overview lists);
`show KEY#part/N` prints page N exactly as the tool returns it (budget from config.toml).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..catalog.verify import VerifyMode
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import VerifyOpt
from ._output import Output, print_text, run
from ._result import Doc
from ._service import open_service, report_problems


def register(app: typer.Typer) -> None:
    @app.command("show")
    def show_cmd(
        ctx: typer.Context,
        skill: Annotated[
            str,
            typer.Argument(
                help="author/pkg/skill (or a skill id / IRI); KEY#part for one part, "
                "KEY#part/N for page N of it as the MCP tool sends it."
            ),
        ],
        verify: VerifyOpt = VerifyMode.FULL,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Show a skill's full context: intents, knowledge, workflows, sections, files."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            service = open_service(app_ctx, verify)
            report_problems(out, service)
            target = service.resolve_context(skill)
            spec = target[1] if target is not None else None
            if target is None or not spec:
                context = service.context(skill)  # NotFoundError (exit 7) when unknown
                return Doc(context.to_json(), text=context.render())
            key = target[0]
            if "/" in spec or "@" in spec or ":" in spec:  # a page: what the tool sends
                answer = service.skill_answer(key, spec, budget=app_ctx.config.serve.context_budget)
                return Doc({**answer.structured, "text": answer.text}, text=answer.text)
            part = service.part(key, spec)
            payload = {
                "skill": key,
                "part": part.id,
                "kind": part.kind,
                "title": part.title,
                "chars": part.chars,
                "parent": part.parent,
                "children": list(part.children),
                "text": part.text,
            }
            return Doc(payload, text=part.text)

        run(app_ctx, body, print_text)
