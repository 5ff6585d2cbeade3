"""`ontoskills serve`: the MCP server over the installed, enabled skills, on stdio (one client,
the default) or Streamable HTTP (`--transport http`: many sessions, one process)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Annotated, Any

import typer

from ..catalog.verify import VerifyMode
from ..choices import Choice
from ..config import SearchMode, check_context_budget
from ..errors import UsageError
from ..manifest import Tier
from . import _context
from ._options import SearchModeOpt, VerifyOpt
from ._output import Output, run

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
            from ..server.runner import configure_logging

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
                        max_streams=app_ctx.config.serve.max_streams,
                    )
                )
                configure_logging(verbose)
                anyio.run(serve_http, early.get, options, http)
                return
            from ..server.runner import serve_stdio

            configure_logging(verbose)
            anyio.run(serve_stdio, early.get, options)

        run(app_ctx, body)
