"""`ontoskills serve`: the MCP stdio server over the installed, enabled skills."""

from __future__ import annotations

from typing import Annotated

import typer

from ..config import check_context_budget
from ..errors import UsageError
from ..manifest import LOCAL_TIER, TIERS
from . import _context
from ._output import Output, run

VERIFY_MODES = ("full", "fast", "none")
SEARCH_MODES = ("auto", "bm25", "semantic", "hybrid")


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        ctx: typer.Context,
        min_trust: Annotated[
            str | None,
            typer.Option("--min-trust", help="Serve only skills at this tier or above."),
        ] = None,
        verify: Annotated[
            str,
            typer.Option("--verify", help="Check installed files at start: full | fast | none."),
        ] = "full",
        mode: Annotated[
            str, typer.Option("--mode", help="Search mode: auto | bm25 | semantic | hybrid.")
        ] = "auto",
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
            if min_trust is not None and min_trust not in (*TIERS, LOCAL_TIER):
                raise UsageError(
                    f"unknown trust tier {min_trust!r}", hint=f"use one of: {', '.join(TIERS)}"
                )
            if verify not in VERIFY_MODES:
                raise UsageError(f"unknown --verify {verify!r}", hint="use full, fast or none")
            if mode not in SEARCH_MODES:
                raise UsageError(f"unknown --mode {mode!r}", hint=f"use {', '.join(SEARCH_MODES)}")
            budget = app_ctx.config.context_budget
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
