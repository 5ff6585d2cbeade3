"""Compact text of a skill's context for agents and terminals (markdown-ish, no colour).

The pieces (a knowledge rule, a workflow, a section, a code block) are rendered by the same
functions for the full context (`show`) and for its parts (parts.py), so a part reads exactly
like the matching stretch of the full text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import SkillContext

_TICKS = re.compile(r"`+")


def fence(code: str, language: str = "") -> list[str]:
    """A fenced block that a backtick run inside the code cannot close early."""
    longest = max(map(len, _TICKS.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [f"{ticks}{language}", code.rstrip("\n"), ticks]


def knowledge_line(k: dict[str, Any]) -> str:
    sev = f"[{k['severity']}] " if k["severity"] else ""
    when = f" (when: {k['context']})" if k["context"] else ""
    why = f"\n  why: {k['rationale']}" if k["rationale"] else ""
    return f"- {sev}{k['type']}: {k['directive']}{when}{why}"


def requirement_line(q: dict[str, Any]) -> str:
    return f"- {q['type']}: {q['value']}" + (" (optional)" if q["optional"] else "")


def workflow_lines(wf: dict[str, Any]) -> list[str]:
    lines = [f"## Workflow: {wf['name'] or wf['id']}"]
    if wf["description"]:
        lines.append(wf["description"])
    for n, step in enumerate(wf["steps"], 1):
        out = f" -> {step['expected_outcome']}" if step["expected_outcome"] else ""
        lines.append(f"{n}. {step['description']}{out}")
    return lines


def heading(s: dict[str, Any]) -> str | None:
    return f"{'#' * min(6, s['level'] + 1)} {s['title']}" if s["title"] else None


def block_lines(b: dict[str, Any]) -> list[str]:
    if "items" in b:
        return [f"- {i}" for i in b["items"]]
    if "steps" in b:
        return [f"{n}. {t}" for n, t in enumerate(b["steps"], 1)]
    if b["type"] == "CodeExample":
        return fence(b["text"], b.get("language", ""))
    if b.get("text"):
        return [b["text"].rstrip()]
    return []


def section_head_lines(s: dict[str, Any]) -> list[str]:
    """A section's heading and own blocks (not its subsections)."""
    lines = [h] if (h := heading(s)) else []
    if "same_as" in s:
        lines.append(f"(this section is also part of “{s['same_as']}”, shown there)")
    elif s.get("cycle"):
        lines.append("(this section contains itself in the Turtle; the loop is not repeated)")
    elif s.get("cut"):
        lines.append(f"(not loaded: {s['cut']})")
    for b in s["blocks"]:
        lines.extend(block_lines(b))
    return lines


def section_lines(lines: list[str], s: dict[str, Any]) -> None:
    """A section with all its subsections, depth first."""
    lines.extend(section_head_lines(s))
    for sub in s["subsections"]:
        section_lines(lines, sub)


def file_lines(ctx: SkillContext) -> list[str]:
    paths = ctx.paths()
    lines = [f"path: {ctx.to_json()['path']}"]
    if paths["scripts"]:
        lines.append("scripts: " + ", ".join(paths["scripts"]))
    others = [a for a in paths["assets"] if a not in paths["scripts"]]
    if others:
        lines.append("assets: " + ", ".join(others))
    return lines


def render_context(
    ctx: SkillContext, files: Callable[[SkillContext], list[str]] = file_lines
) -> str:
    """The whole context as text; `files` renders where its files are (default: on disk)."""
    r = ctx.record
    lines = [f"# {ctx.key} [{r.trust_tier}]", r.description]
    if r.intents:
        lines.append("intents: " + "; ".join(r.intents))
    if ctx.dependencies:
        lines.append("depends on: " + ", ".join(ctx.dependencies))
    if ctx.requirements:
        lines.append("## Requirements")
        lines.extend(requirement_line(q) for q in ctx.requirements)
    if ctx.knowledge:
        lines.append("## Knowledge")
        lines.extend(knowledge_line(k) for k in ctx.knowledge)
    for wf in ctx.workflows:
        lines.extend(workflow_lines(wf))
    if ctx.sections:
        lines.append("## Content")
        for s in ctx.sections:
            section_lines(lines, s)
    lines.extend(files(ctx))
    lines.extend(f"note: {n}" for n in ctx.notes)
    return "\n".join(lines) + "\n"
