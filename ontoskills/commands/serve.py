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

M_ARENA_MAX = -8  # glibc malloc.h


def one_malloc_arena() -> None:
    """One glibc malloc arena for the whole server. Calls run in worker threads and glibc
    gives threads arenas of their own, each keeping the memory freed in it: over 3,000 calls
    from 4 concurrent tasks the server grew 151 -> 173 MB with the default, 145 -> 154 MB with
    one arena (docs/PERFORMANCE.md). The GIL serialises our allocations anyway. Not glibc
    (macOS, musl): nothing to do."""
    import contextlib
    import ctypes

    with contextlib.suppress(AttributeError, OSError, TypeError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)


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
            one_malloc_arena()
            home, lockfile, config = app_ctx.home, app_ctx.lockfile, app_ctx.config

            def factory() -> Service:
                # Runs in a worker thread once the transport is up: importing the search
                # stack (numpy, pyoxigraph, onnxruntime) there keeps `initialize` fast.
                from ..search.service import SkillService

                return SkillService(home, lockfile, config, verify=verify, build_in_child=True)

            options = ServeOptions(min_trust=min_trust, mode=mode, context_budget=budget)
            anyio.run(serve_stdio, factory, options)

        run(app_ctx, body)
