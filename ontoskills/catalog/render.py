"""Compact text of a skill's context for agents and terminals (markdown-ish, no colour)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import SkillContext


def _section(lines: list[str], s: dict[str, Any]) -> None:
    if s["title"]:
        lines.append(f"{'#' * min(6, s['level'] + 1)} {s['title']}")
    for b in s["blocks"]:
        if "items" in b:
            lines.extend(f"- {i}" for i in b["items"])
        elif "steps" in b:
            lines.extend(f"{n}. {t}" for n, t in enumerate(b["steps"], 1))
        elif b["type"] == "CodeExample":
            lines.extend([f"```{b.get('language', '')}", b["text"].rstrip("\n"), "```"])
        elif b.get("text"):
            lines.append(b["text"].rstrip())
    for sub in s["subsections"]:
        _section(lines, sub)


def render_context(ctx: SkillContext) -> str:
    r = ctx.record
    lines = [f"# {ctx.key} [{r.trust_tier}]", r.description]
    if r.intents:
        lines.append("intents: " + "; ".join(r.intents))
    if ctx.dependencies:
        lines.append("depends on: " + ", ".join(ctx.dependencies))
    if ctx.requirements:
        lines.append("## Requirements")
        lines.extend(
            f"- {q['type']}: {q['value']}" + (" (optional)" if q["optional"] else "")
            for q in ctx.requirements
        )
    if ctx.knowledge:
        lines.append("## Knowledge")
        for k in ctx.knowledge:
            sev = f"[{k['severity']}] " if k["severity"] else ""
            when = f" (when: {k['context']})" if k["context"] else ""
            lines.append(f"- {sev}{k['type']}: {k['directive']}{when}")
    for wf in ctx.workflows:
        lines.append(f"## Workflow: {wf['name'] or wf['id']}")
        if wf["description"]:
            lines.append(wf["description"])
        for n, step in enumerate(wf["steps"], 1):
            out = f" -> {step['expected_outcome']}" if step["expected_outcome"] else ""
            lines.append(f"{n}. {step['description']}{out}")
    if ctx.sections:
        lines.append("## Content")
        for s in ctx.sections:
            _section(lines, s)
    paths = ctx.paths()
    lines.append(f"path: {ctx.to_json()['path']}")
    if paths["scripts"]:
        lines.append("scripts: " + ", ".join(paths["scripts"]))
    others = [a for a in paths["assets"] if a not in paths["scripts"]]
    if others:
        lines.append("assets: " + ", ".join(others))
    return "\n".join(line for line in lines if line is not None) + "\n"
