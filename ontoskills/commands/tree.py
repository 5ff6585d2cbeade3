"""`ontoskills tree` and `ontoskills why PKG[/SKILL]`: the lock as a tree, and why a skill
is installed (which requested spec, through which skill dependencies)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.graph import Tree, TreePackage, Why, tree, why
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run

# Box-drawing as cargo tree and npm ls draw it: (branch, last branch), (more below, none).
_BRANCH = ("├── ", "└── ")
_STEM = ("│   ", "    ")


def _skill_lines(pkg: TreePackage, roots: tuple[str, ...], indent: str) -> list[str]:
    """`roots` and, nested under each, the skills it depends on; a skill already drawn in
    this block is marked (*) and not expanded again (cycles, shared dependencies)."""
    by_id = {s.id: s for s in pkg.skills}
    drawn: set[str] = set()
    lines: list[str] = []

    def draw(sid: str, prefix: str, last: bool) -> None:
        skill = by_id[sid]
        marks = "" if skill.enabled else " [disabled]"
        repeat = sid in drawn
        lines.append(f"{prefix}{_BRANCH[last]}{sid}{marks}{' (*)' if repeat else ''}")
        if repeat:
            return
        drawn.add(sid)
        deps = skill.depends_on
        for i, dep in enumerate(deps):
            draw(dep, prefix + _STEM[last], i == len(deps) - 1)

    for i, sid in enumerate(roots):
        draw(sid, indent, i == len(roots) - 1)
    return lines


UNREACHED = "(in the lock, reached from no requested spec)"


def _unreached(pkg: TreePackage) -> tuple[str, ...]:
    edges = {s.id: s.depends_on for s in pkg.skills}
    seen: set[str] = set()
    todo = [sid for spec in pkg.requested for sid in spec.skills]
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo.extend(edges.get(sid, ()))
    return tuple(s.id for s in pkg.skills if s.id not in seen)


def render_tree(out: Output, graph: Tree) -> None:
    if not graph.packages:
        out.info("no packages installed")
        return
    lines = [graph.lockfile]
    for pkg in graph.packages:
        head = f"{_BRANCH[1]}{pkg.package} {pkg.version} [{pkg.trust_tier}]"
        for spec in pkg.requested:
            lines.append(spec.spec)
            lines.append(head + (" (whole package)" if spec.whole else ""))
            lines.extend(_skill_lines(pkg, spec.skills, _STEM[1]))
        # in the lock but not under any spec (dependencies unknown: a problem line says why)
        left = _unreached(pkg)
        if left:
            lines.append(UNREACHED)
            lines.append(head)
            lines.extend(_skill_lines(pkg, left, _STEM[1]))
    if any(line.endswith(" (*)") for line in lines):
        lines.append("(*) shown above")
    out.stdout("\n".join(lines))
    for problem in graph.problems:
        out.warn(problem)


def render_why(out: Output, answer: Why) -> None:
    for problem in answer.problems:
        out.warn(problem)
    state = "" if answer.enabled is None else (" (enabled)" if answer.enabled else " (disabled)")
    if not answer.reasons:
        out.stdout(
            f"{answer.target} {answer.version}{state} is in the lock, but no requested spec "
            "reaches it (`ontoskills tree` shows what each one brings in)"
        )
        return
    lines = [f"{answer.target} {answer.version}{state} is installed because:"]
    for r in answer.reasons:
        if r.spec.count("/") == 1:
            lines.append(f"  {r.spec} is requested (the whole package)")
        elif answer.skill is None:
            lines.append(f"  {r.spec} is requested (one of its skills)")
        elif len(r.chain) == 1:
            lines.append(f"  {r.spec} is requested")
        else:
            lines.append(f"  {r.spec} is requested, and {' -> '.join(r.chain)}")
    if any(len(r.chain) > 1 for r in answer.reasons):
        lines.append("  (a -> b: skill a depends on skill b, oc:dependsOnSkill)")
    out.stdout("\n".join(lines))


def tree_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show the lock as a tree: requested specs -> packages -> skills and their dependencies."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Tree:
        return tree(app_ctx.session())

    run(app_ctx, body, render_tree)


def why_cmd(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="author/pkg/skill (or author/pkg)")],
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Say which requested spec brought a skill in, through which skill dependencies."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Why:
        return why(app_ctx.session(), target)

    run(app_ctx, body, render_why)


def register(app: typer.Typer) -> None:
    app.command("tree")(tree_cmd)
    app.command("why")(why_cmd)
