"""`ontoskills serve`: the MCP stdio server over the installed, enabled skills."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any

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


class _Prefetch:
    """`build()` started in a thread at once; the server's first call to `get` (in its worker
    thread, once the transport is up) takes that result or its exception, later calls (the
    server retries a failed load) build again."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._result: Any = None
        self._error: BaseException | None = None
        self._used = False
        self._thread = threading.Thread(target=self._run, name="ontoskills-catalog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._build()
        except BaseException as exc:  # handed to the server's loader, which reports it
            self._error = exc

    def get(self) -> Any:
        if self._used:
            return self._build()
        self._used = True
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


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
            home, lockfile, config = app_ctx.home, app_ctx.lockfile, app_ctx.config
            one_malloc_arena()  # before any thread allocates

            def build() -> Service:
                from ..search.service import SkillService

                return SkillService(home, lockfile, config, verify=verify, build_in_child=True)

            # The catalog starts loading now, while the SDK is imported (~0.6 s of CPU):
            # verification hashes every installed file and reads the snapshot, which release
            # the GIL, so on two cores the first answer comes ~0.1-0.2 s sooner.
            early = _Prefetch(build)
            # Imported here: the SDK and the search stack are heavy and only `serve` needs them.
            import anyio

            from ..server.app import ServeOptions, Service
            from ..server.runner import configure_logging, serve_stdio

            configure_logging(verbose)

            options = ServeOptions(min_trust=min_trust, mode=mode, context_budget=budget)
            anyio.run(serve_stdio, early.get, options)

        run(app_ctx, body)
