"""`ontoskills show author/pkg/skill`: one skill's full context, for humans.

`show KEY#part` prints one part whole (the ids are those the MCP tool's overview lists);
`show KEY#part/N` prints page N exactly as the tool returns it (budget from config.toml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..catalog.verify import VerifyMode
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import VerifyOpt
from ._output import Output, run
from ._service import open_service, report_problems

if TYPE_CHECKING:
    from ..catalog.context import SkillContext
    from ..catalog.disclosure import ContextAnswer
    from ..catalog.parts import Part


@dataclass(frozen=True)
class ShownPart:
    """`show KEY#part`: one part of a skill, whole."""

    skill: str
    part: Part

    def to_json(self) -> dict[str, Any]:
        p = self.part
        return {
            "skill": self.skill,
            "part": p.id,
            "kind": p.kind,
            "title": p.title,
            "chars": p.chars,
            "parent": p.parent,
            "children": list(p.children),
            "text": p.text,
        }


def render(out: Output, shown: SkillContext | ContextAnswer | ShownPart) -> None:
    from ..catalog.context import SkillContext  # loaded already: the body opened the service

    if isinstance(shown, SkillContext):
        out.stdout(shown.render())
    elif isinstance(shown, ShownPart):
        out.stdout(shown.part.text)
    else:  # a page: exactly the text the tool sends
        out.stdout(shown.text)


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

        def body(out: Output) -> SkillContext | ContextAnswer | ShownPart:
            service = open_service(app_ctx, verify, out)
            report_problems(out, service)
            target = service.resolve_context(skill)
            spec = target[1] if target is not None else None
            if target is None or not spec:
                return service.context(skill)  # NotFoundError (exit 7) when unknown
            key = target[0]
            if "/" in spec or "@" in spec or ":" in spec:  # a page: what the tool sends
                return service.skill_answer(key, spec, budget=app_ctx.config.serve.context_budget)
            return ShownPart(key, service.part(key, spec))

        run(app_ctx, body, render)
