"""`ontoskills mcp-config --client C`: add `ontoskills serve` to an MCP client's config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..server import mcpconfig as clients
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc


def register(app: typer.Typer) -> None:
    @app.command("mcp-config")
    def mcp_config_cmd(
        ctx: typer.Context,
        client: Annotated[
            str,
            typer.Option(
                "--client",
                help="claude | claude-desktop | cursor | vscode | windsurf | codex | zed | "
                "gemini | opencode | goose | cline",
            ),
        ],
        project: Annotated[
            bool, typer.Option("--project", help="The project's config file (in --dir).")
        ] = False,
        global_: Annotated[
            bool, typer.Option("--global", help="The user-wide config file.")
        ] = False,
        print_only: Annotated[
            bool, typer.Option("--print", help="Print the snippet; change no file.")
        ] = False,
        name: Annotated[str, typer.Option("--name", help="Server name in the client.")] = (
            "ontoskills"
        ),
        directory: Annotated[
            Path | None, typer.Option("--dir", help="Project folder (default: current folder).")
        ] = None,
        url: Annotated[
            str | None,
            typer.Option(
                "--url",
                help="A running `serve --transport http` (e.g. http://127.0.0.1:8765/mcp) "
                "instead of a command the client starts.",
            ),
        ] = None,
        token_env: Annotated[
            str | None,
            typer.Option(
                "--token-env",
                help="With --url: the variable holding the bearer token (the entry names it; "
                "the token is never written).",
            ),
        ] = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Register the MCP server with a client (merges, backs up, idempotent)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            if project and global_:
                raise UsageError("--project and --global are exclusive", hint="pass one of them")
            scope: clients.Scope | None = "project" if project else "global" if global_ else None
            target = clients.resolve_target(
                client.lower(),
                scope,
                project_dir=(directory or Path.cwd()).absolute(),
                user_home=Path.home(),
            )
            if token_env is not None and url is None:
                raise UsageError("--token-env goes with --url", hint="add --url URL")
            spec: clients.Spec = (
                clients.remote_spec(name, url, token_env)
                if url is not None
                else clients.launch_spec(name, home=app_ctx.home.root, lockfile=app_ctx.lockfile)
            )
            if print_only:
                return Doc(
                    {
                        "client": target.client,
                        "scope": target.scope,
                        "path": str(target.path),
                        "snippet": clients.snippet(target, spec),
                    }
                )
            result = clients.apply(target, spec)
            return Doc(
                {
                    "client": target.client,
                    "scope": target.scope,
                    "path": str(target.path),
                    "name": spec.name,
                    "action": result.action,
                    "backup": str(result.backup) if result.backup else None,
                    "entry": result.entry,
                }
            )

        run(app_ctx, body, render)


def render(out: Output, doc: Doc) -> None:
    d = doc.payload
    if "snippet" in d:  # --print
        out.info(f"# add to {d['path']}")
        out.stdout(d["snippet"])
        return
    if d["action"] == "unchanged":
        out.success(f"{d['path']} already has {d['name']!r}; nothing changed")
    else:
        out.success(f"{d['action']} {d['name']!r} in {d['path']}")
        if d["backup"]:
            out.info(f"previous file saved as {d['backup']}")
    out.info(f"restart {d['client']} to pick up the server")
