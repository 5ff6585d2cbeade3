"""`ontoskills link --agent A [--project|--global]` and `unlink --agent A`: the served skills
as folders in an agent's own skills folder (agentlink/, docs/AGENTS.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..agentlink.agents import AGENTS, AgentName
from ..agentlink.sync import LinkReport
from ..errors import UsageError
from ..install import homelock
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

AgentOpt = Annotated[
    AgentName,
    typer.Option("--agent", case_sensitive=False, help="The agent whose skills folder to use."),
]
ProjectOpt = Annotated[
    bool, typer.Option("--project", help="The project's folder (the default): .claude/skills, ...")
]
GlobalOpt = Annotated[
    bool, typer.Option("--global", help="The user-wide folder: ~/.claude/skills, ...")
]


def project_root(app: AppContext) -> Path:
    """The project `--project` means: the discovered project's root (the folder of its
    ontoskills.toml, docs/CLI.md "Projects"), else the current folder."""
    project = app.project
    return project.root if project is not None else Path.cwd()


def _scope(app: AppContext, project: bool, global_: bool) -> tuple[str, Path]:
    if project and global_:
        raise UsageError("--project and --global are exclusive", hint="pass one of them")
    if global_:
        return "global", Path.home()
    return "project", project_root(app)


def link_cmd(
    ctx: typer.Context,
    agent: AgentOpt,
    project: ProjectOpt = False,
    global_: GlobalOpt = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write every served skill into an agent's skills folder; kept in step afterwards."""
    app = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> LinkReport:
        from ..agentlink import ops

        scope, base = _scope(app, project, global_)
        with out.reporter() as rep, homelock.hold(app.home, "link", on_wait=rep.note):
            return ops.link(app.home, app.lockfile, app.config, str(agent), scope, base, rep)

    run(app, body, render)


def unlink_cmd(
    ctx: typer.Context,
    agent: AgentOpt,
    project: ProjectOpt = False,
    global_: GlobalOpt = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Remove the skill folders `link` wrote for an agent (never one changed since)."""
    app = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> LinkReport:
        from ..agentlink import ops

        scope, base = _scope(app, project, global_)
        with out.reporter() as rep, homelock.hold(app.home, "unlink", on_wait=rep.note):
            return ops.unlink(app.home, str(agent), scope, base, rep)

    run(app, body, render)


def render(out: Output, r: LinkReport) -> None:
    label = AGENTS[r.agent].label
    if r.command == "unlink":
        out.success(f"unlinked {len(r.removed)} skills of {label} from {r.target}")
        return
    out.success(
        f"linked {r.linked} skills for {label} in {r.target} ({len(r.added)} added, "
        f"{len(r.updated)} updated, {len(r.removed)} removed)"
    )
    out.info("kept in step by install, update, remove, enable and disable; undo with unlink")


def register(app: typer.Typer) -> None:
    app.command("link")(link_cmd)
    app.command("unlink")(unlink_cmd)
