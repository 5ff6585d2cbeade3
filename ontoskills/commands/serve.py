"""`ontoskills serve`: the MCP server over the installed, enabled skills, on stdio (one client,
the default) or Streamable HTTP (`--transport http`: many sessions, one process)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ..catalog.verify import VerifyMode
from ..choices import Choice
from ..config import SearchMode, check_context_budget
from ..errors import UsageError
from ..manifest import Tier
from . import _context
from ._output import Output, run
from .search import SearchModeOpt, VerifyOpt

DEFAULT_PORT = 8765  # server/http.py's, repeated here: the CLI does not import the SDK early
TOKEN_ENV = "ONTOSKILLS_SERVE_TOKEN"


class Transport(Choice):
    STDIO = "stdio"
    HTTP = "http"


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        ctx: typer.Context,
        min_trust: Annotated[
            Tier | None,
            typer.Option("--min-trust", help="Serve only skills at this tier or above."),
        ] = None,
        verify: VerifyOpt = VerifyMode.FULL,
        mode: SearchModeOpt = SearchMode.AUTO,
        context_budget: Annotated[
            int | None,
            typer.Option(
                "--context-budget",
                help="Characters of one skill answer (text + structured JSON); default "
                "[serve] context_budget in config.toml, else 12000.",
            ),
        ] = None,
        transport: Annotated[
            Transport,
            typer.Option("--transport", help="stdio (one client) or http (Streamable HTTP)."),
        ] = Transport.STDIO,
        host: Annotated[
            str | None,
            typer.Option(
                "--host",
                help="http: address to bind (default 127.0.0.1; anything but loopback "
                f"needs {TOKEN_ENV}).",
            ),
        ] = None,
        port: Annotated[
            int | None,
            typer.Option("--port", help=f"http: TCP port (default {DEFAULT_PORT}; 0 = any free)."),
        ] = None,
        allow_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-host",
                help="http: another Host header to accept (e.g. skills.internal:8765; "
                "name:* for any port). Repeatable.",
            ),
        ] = None,
        allow_origin: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-origin", help="http: another browser Origin to accept. Repeatable."
            ),
        ] = None,
        prompts: Annotated[
            bool,
            typer.Option(
                "--prompts",
                help="Also one prompt per served skill (clients show prompts as slash commands).",
            ),
        ] = False,
        verbose: Annotated[bool, typer.Option("--verbose", help="Debug logs on stderr.")] = False,
    ) -> None:
        """Run the MCP server (stdio for Claude Code, Cursor, VS Code, Codex...; or HTTP)."""
        app_ctx = _context.get(ctx)

        def body(out: Output) -> None:
            budget = app_ctx.config.serve.context_budget
            if context_budget is not None:
                budget = check_context_budget(context_budget, "--context-budget")
            http_only = [
                flag
                for flag, value in (
                    ("--host", host),
                    ("--port", port),
                    ("--allow-host", allow_host),
                    ("--allow-origin", allow_origin),
                )
                if value
            ]
            if transport == Transport.STDIO and http_only:
                raise UsageError(
                    f"{', '.join(http_only)} only apply to --transport http",
                    hint="add --transport http, or drop them",
                )
            # Imported here: the SDK and the search stack are heavy and only `serve` needs them.
            import anyio

            from ..server.app import ServeOptions, Service
            from ..server.runner import configure_logging

            home, lockfile, config = app_ctx.home, app_ctx.lockfile, app_ctx.config

            def factory() -> Service:
                # Runs in a worker thread once the transport is up: importing the search
                # stack (numpy, pyoxigraph, onnxruntime) there keeps `initialize` fast.
                from ..search.service import SkillService

                return SkillService(home, lockfile, config, verify=verify)

            options = ServeOptions(
                min_trust=min_trust, mode=mode, context_budget=budget, prompts=prompts
            )
            if transport == Transport.HTTP:
                from ..server.http import HttpOptions, check_options, serve_http

                http = check_options(  # before anything starts: a refusal is exit 2
                    HttpOptions(
                        host=host or "127.0.0.1",
                        port=DEFAULT_PORT if port is None else port,
                        token=os.environ.get(TOKEN_ENV) or None,
                        allow_hosts=tuple(allow_host or ()),
                        allow_origins=tuple(allow_origin or ()),
                        verbose=verbose,
                    )
                )
                configure_logging(verbose)
                anyio.run(serve_http, factory, options, http)
                return
            from ..server.runner import serve_stdio

            configure_logging(verbose)
            anyio.run(serve_stdio, factory, options)

        run(app_ctx, body)
