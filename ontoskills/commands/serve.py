"""`ontoskills serve`: the MCP stdio server over the installed, enabled skills."""

from __future__ import annotations

from typing import Annotated

import typer

from ..catalog.verify import VerifyMode
from ..config import SearchMode, check_context_budget
from ..manifest import Tier
from . import _context
from ._output import Output, run
from .search import SearchModeOpt, VerifyOpt


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
        verbose: Annotated[bool, typer.Option("--verbose", help="Debug logs on stderr.")] = False,
    ) -> None:
        """Run the MCP server on stdin/stdout (for Claude Code, Cursor, VS Code, Codex...)."""
        app_ctx = _context.get(ctx)

        def body(out: Output) -> None:
            budget = app_ctx.config.serve.context_budget
            if context_budget is not None:
                budget = check_context_budget(context_budget, "--context-budget")
            # Imported here: the SDK and the search stack are heavy and only `serve` needs them.
            import anyio

            from ..server.app import ServeOptions, Service
            from ..server.runner import configure_logging, serve_stdio

            configure_logging(verbose)
            home, lockfile, config = app_ctx.home, app_ctx.lockfile, app_ctx.config

            def factory() -> Service:
                # Runs in a worker thread once the transport is up: importing the search
                # stack (numpy, pyoxigraph, onnxruntime) there keeps `initialize` fast.
                from ..search.service import SkillService

                return SkillService(home, lockfile, config, verify=verify)

            options = ServeOptions(min_trust=min_trust, mode=mode, context_budget=budget)
            anyio.run(serve_stdio, factory, options)

        run(app_ctx, body)
