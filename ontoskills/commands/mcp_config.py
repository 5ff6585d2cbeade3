"""`ontoskills mcp-config --client C`: add `ontoskills serve` to an MCP client's config."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..clientconfig import spec as specs
from ..clientconfig import write
from ..clientconfig.clients import ClientName, Scope
from ..errors import UsageError
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

ClientOpt = Annotated[
    ClientName,
    typer.Option("--client", case_sensitive=False, help="The MCP client to configure."),
]
ProjectOpt = Annotated[
    bool, typer.Option("--project", help="The project's config file (in --dir).")
]
GlobalOpt = Annotated[bool, typer.Option("--global", help="The user-wide config file.")]
PrintOpt = Annotated[bool, typer.Option("--print", help="Print the snippet; change no file.")]
NameOpt = Annotated[str, typer.Option("--name", help="Server name in the client.")]
DirOpt = Annotated[
    Path | None, typer.Option("--dir", help="Project folder (default: current folder).")
]
UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="A running `serve --transport http` (e.g. http://127.0.0.1:8765/mcp) "
        "instead of a command the client starts.",
    ),
]
TokenEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--token-env",
        help="With --url: the variable holding the bearer token (the entry names it; "
        "the token is never written).",
    ),
]


@dataclass(frozen=True)
class Snippet:
    """`--print`: the entry to add by hand; no file changed."""

    target: specs.Target
    snippet: str
    on_path: bool = False  # the entry runs `ontoskills` from PATH (a project's shared file)

    def to_json(self) -> dict[str, Any]:
        t = self.target
        return {"client": t.client, "scope": t.scope, "path": str(t.path), "snippet": self.snippet}


@dataclass(frozen=True)
class Applied:
    """The entry written (or found already there) in the client's config."""

    name: str
    result: write.ApplyResult
    on_path: bool = False  # the entry runs `ontoskills` from PATH (a project's shared file)

    def to_json(self) -> dict[str, Any]:
        r, t = self.result, self.result.target
        return {
            "client": t.client,
            "scope": t.scope,
            "path": str(t.path),
            "name": self.name,
            "action": r.action,
            "backup": str(r.backup) if r.backup else None,
            "entry": r.entry,
        }


def mcp_config_cmd(
    ctx: typer.Context,
    client: ClientOpt,
    project: ProjectOpt = False,
    global_: GlobalOpt = False,
    print_only: PrintOpt = False,
    name: NameOpt = "ontoskills",
    directory: DirOpt = None,
    url: UrlOpt = None,
    token_env: TokenEnvOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Register the MCP server with a client (merges, backs up, idempotent)."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Snippet | Applied:
        if project and global_:
            raise UsageError("--project and --global are exclusive", hint="pass one of them")
        scope: Scope | None = "project" if project else "global" if global_ else None
        found = app_ctx.project  # in a project, its root is the default --dir
        target = specs.resolve_target(
            str(client),
            scope,
            project_dir=(directory or (found.root if found else Path.cwd())).absolute(),
            user_home=Path.home(),
        )
        spec = _spec(app_ctx, target, name, url, token_env)
        on_path = isinstance(spec, specs.LaunchSpec) and spec.command == specs.PORTABLE_COMMAND
        if on_path and shutil.which(specs.PORTABLE_COMMAND) is None:
            out.warn(
                "`ontoskills` is not on this machine's PATH, so the client will not find it: "
                "run install.sh, or add the folder holding ontoskills to PATH"
            )
        if print_only:
            return Snippet(target, write.snippet(target, spec), on_path)
        return Applied(spec.name, write.apply(target, spec), on_path)

    run(app_ctx, body, render)


def _spec(
    app_ctx: AppContext, target: specs.Target, name: str, url: str | None, token_env: str | None
) -> specs.Spec:
    """The entry: a command the client starts, or (`--url`) a running HTTP server."""
    if token_env is not None and url is None:
        raise UsageError("--token-env goes with --url", hint="add --url URL")
    if url is not None:
        return specs.remote_spec(name, url, token_env)
    project = app_ctx.project
    if (
        project is not None
        and target.scope == "project"
        and target.path.is_relative_to(project.root.absolute())
    ):  # the project's own file, committed: nothing of this machine in it
        return specs.project_launch_spec(name, target.client)
    if project is not None:  # serves this project whatever the client's working folder
        return specs.launch_spec(name, home=None, lockfile=None, project=project.root)
    return specs.launch_spec(name, home=app_ctx.home.root, lockfile=app_ctx.lockfile)


def render(out: Output, done: Snippet | Applied) -> None:
    if isinstance(done, Snippet):
        out.info(f"# add to {done.target.path}")
        out.stdout(done.snippet)
        _say_path(out, done.on_path)
        return
    r = done.result
    if r.action == "unchanged":
        out.success(f"{r.target.path} already has {done.name!r}; nothing changed")
    else:
        out.success(f"{r.action} {done.name!r} in {r.target.path}")
        if r.backup:
            out.info(f"previous file saved as {r.backup}")
    _say_path(out, done.on_path)
    out.info(f"restart {r.target.client} to pick up the server")


def _say_path(out: Output, on_path: bool) -> None:
    """What a teammate who clones the project needs for the shared entry to start."""
    if not on_path:
        return
    out.info(
        "the entry runs `ontoskills` from PATH (no path of this machine, so it can be "
        "committed): everyone using it needs the ontoskills command on PATH (install.sh: "
        "uv tool, pipx or ~/.local/bin)"
    )


def register(app: typer.Typer) -> None:
    app.command("mcp-config")(mcp_config_cmd)
