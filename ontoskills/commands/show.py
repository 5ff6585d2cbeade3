"""`ontoskills show author/pkg/skill`: one skill's full context, for humans.

`show KEY#part` prints one part whole (the ids are those the MCP tool's overview lists);
`show KEY#part/N` prints page N exactly as the tool returns it (budget from config.toml).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..catalog.verify import VerifyMode
from ..errors import UsageError
from ..query import split_ref
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
    else:  # a page: the text the tool sends, its last line saying the next step in CLI terms
        out.stdout(cli_page(shown))


def _cli(ref: str) -> str:
    return f"ontoskills show {shlex.quote(ref)}"


def cli_page(answer: ContextAnswer) -> str:
    """A page as the tool sends it, but the footer's next step (`ontoskill(q=...)`, the
    MCP tool's syntax, which a person at a terminal cannot type) as the CLI command."""
    data = answer.structured
    if data.get("kind") != "skill-part" or "\n\n" not in answer.text:
        return answer.text
    body = answer.text.rsplit("\n\n", 1)[0]  # the footer is the last paragraph (disclosure)
    skill, part, nxt = data["skill"], data["part"], data.get("next")
    if nxt:
        return f"{body}\n\nnext page: {_cli(nxt)}"
    return (
        f"{body}\n\nend of #{part}. Overview: {_cli(skill)}; "
        f"every part: {_cli(skill + '#index')}"
    )


def refuse_ambiguous(q: str, keys: list[str]) -> None:
    """`show pdf` when several packages ship a `pdf`: exit 2 naming them (as `install`
    names the close matches of a misspelt skill), never one picked silently."""
    if not keys:
        return
    ref = split_ref(q)
    listed = ", ".join(keys[:20]) + (f" (+{len(keys) - 20} more)" if len(keys) > 20 else "")
    example = keys[0] + (f"#{ref[1]}" if ref is not None and ref[1] else "")
    raise UsageError(
        f"{q!r} is ambiguous: {len(keys)} installed skills have that name: {listed}",
        hint=f"name one in full, e.g. `{_cli(example)}`",
    )


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
            refuse_ambiguous(skill, service.same_named(skill))
            target = service.resolve_context(skill)
            spec = target[1] if target is not None else None
            if target is None or not spec:
                return service.context(skill)  # NotFoundError (exit 7) when unknown
            key = target[0]
            if "/" in spec or "@" in spec or ":" in spec:  # a page: what the tool sends
                return service.skill_answer(key, spec, budget=app_ctx.config.serve.context_budget)
            return ShownPart(key, service.part(key, spec))

        run(app_ctx, body, render)
