"""`ontoskills serve`: the MCP server over the installed, enabled skills, on stdio (one client,
the default) or Streamable HTTP (`--transport http`: many sessions, one process)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from ..catalog.verify import VerifyMode
from ..choices import Choice
from ..config import SearchMode, check_context_budget
from ..errors import UsageError
from ..manifest import Tier
from ..project import Policy
from . import _context
from ._options import SearchModeOpt, VerifyOpt
from ._output import Output, run

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..server.app import ServeOptions
    from ..server.http import HttpOptions
    from ._context import AppContext

DEFAULT_PORT = 8765  # server/http.py's, repeated here: the CLI does not import the SDK early
TOKEN_ENV = "ONTOSKILLS_SERVE_TOKEN"


class Transport(Choice):
    STDIO = "stdio"
    HTTP = "http"


ServeMinTrustOpt = Annotated[
    Tier | None, typer.Option("--min-trust", help="Serve only skills at this tier or above.")
]
ContextBudgetOpt = Annotated[
    int | None,
    typer.Option(
        "--context-budget",
        help="Characters of one skill answer (text + structured JSON); default "
        "[serve] context_budget in config.toml, else 12000.",
    ),
]
TransportOpt = Annotated[
    Transport, typer.Option("--transport", help="stdio (one client) or http (Streamable HTTP).")
]
HostOpt = Annotated[
    str | None,
    typer.Option(
        "--host",
        help="http: address to bind (default 127.0.0.1; anything but loopback "
        f"needs {TOKEN_ENV}).",
    ),
]
PortOpt = Annotated[
    int | None,
    typer.Option("--port", help=f"http: TCP port (default {DEFAULT_PORT}; 0 = any free)."),
]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        help="http: another Host header to accept (e.g. skills.internal:8765; "
        "name:* for any port). Repeatable.",
    ),
]
AllowOriginOpt = Annotated[
    list[str] | None,
    typer.Option("--allow-origin", help="http: another browser Origin to accept. Repeatable."),
]
PromptsOpt = Annotated[
    bool,
    typer.Option(
        "--prompts",
        help="Also one prompt per served skill (clients show prompts as slash commands).",
    ),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", help="Debug logs on stderr.")]


def serve_cmd(
    ctx: typer.Context,
    min_trust: ServeMinTrustOpt = None,
    verify: VerifyOpt = VerifyMode.FULL,
    mode: SearchModeOpt = SearchMode.AUTO,
    context_budget: ContextBudgetOpt = None,
    transport: TransportOpt = Transport.STDIO,
    host: HostOpt = None,
    port: PortOpt = None,
    allow_host: AllowHostOpt = None,
    allow_origin: AllowOriginOpt = None,
    prompts: PromptsOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run the MCP server (stdio for Claude Code, Cursor, VS Code, Codex...; or HTTP)."""
    app_ctx = _context.get(ctx)

    def body(out: Output) -> None:
        budget = app_ctx.config.serve.context_budget
        if context_budget is not None:
            budget = check_context_budget(context_budget, "--context-budget")
        _refuse_http_flags(transport, host, port, allow_host, allow_origin)
        project = app_ctx.project
        if project is not None and project.manifest.policy != Policy():
            from ._project import check_lock_policy

            check_lock_policy(app_ctx)  # exit 4 before serving what the policy refuses
        out.info(f"serving {app_ctx.where}")

        def options() -> ServeOptions:  # called once the SDK is being imported, not before
            from ..server.app import ServeOptions

            return ServeOptions(
                min_trust=min_trust,
                mode=mode,
                context_budget=budget,
                prompts=prompts,
                watch_interval=app_ctx.config.serve.watch_interval,
            )

        if transport == Transport.HTTP:
            flags = (host, port, allow_host, allow_origin)
            _serve_http(app_ctx, verify, options, flags, verbose)
        else:
            _serve_stdio(app_ctx, verify, options, verbose)

    run(app_ctx, body)


def _refuse_http_flags(
    transport: Transport,
    host: str | None,
    port: int | None,
    allow_host: list[str] | None,
    allow_origin: list[str] | None,
) -> None:
    http_flags = (
        ("--host", host),
        ("--port", port),
        ("--allow-host", allow_host),
        ("--allow-origin", allow_origin),
    )
    http_only = [flag for flag, value in http_flags if value]
    if transport == Transport.STDIO and http_only:
        raise UsageError(
            f"{', '.join(http_only)} only apply to --transport http",
            hint="add --transport http, or drop them",
        )


def _serve_stdio(
    app_ctx: AppContext, verify: VerifyMode, options: Callable[[], ServeOptions], verbose: bool
) -> None:
    """The handshake first, then the SDK, then the catalog: on a busy machine each step
    would slow the one before it (docs/PERFORMANCE.md)."""
    from ..server.early import answer_initialize

    # The handshake answered before the catalog load and the SDK import can slow it
    # down on a busy machine (server/early.py).
    first = answer_initialize()
    from ..server.prefetch import one_malloc_arena, prefetch_service

    one_malloc_arena()  # before any thread allocates
    from ..server.early import answer_tools_list

    # The SDK imported in a thread while a plain tools/list (static) is answered here:
    # on a busy machine the import alone is seconds (docs/PERFORMANCE.md).
    first = answer_tools_list(first, _import_sdk)
    # The catalog once the SDK is in: the client's requests after initialize need the SDK,
    # not the catalog, and on a busy machine the two compete (docs/PERFORMANCE.md).
    import anyio

    served = options()
    from ..server.runner import configure_logging, serve_stdio

    early = prefetch_service(app_ctx.home, app_ctx.lockfile, app_ctx.session_config, verify)
    configure_logging(verbose)
    anyio.run(serve_stdio, early.get, served, first)


def _serve_http(
    app_ctx: AppContext,
    verify: VerifyMode,
    options: Callable[[], ServeOptions],
    flags: tuple[str | None, int | None, list[str] | None, list[str] | None],
    verbose: bool,
) -> None:
    """The catalog starts loading at once, while the SDK is imported (server/prefetch.py)."""
    from ..server.prefetch import one_malloc_arena, prefetch_service

    one_malloc_arena()  # before any thread allocates
    early = prefetch_service(app_ctx.home, app_ctx.lockfile, app_ctx.session_config, verify)
    # Imported here: the SDK and the search stack are heavy and only `serve` needs them.
    import anyio

    served = options()
    from ..server.http import serve_http
    from ..server.runner import configure_logging

    http = _http_options(*flags, verbose, app_ctx.config.serve.max_streams)
    configure_logging(verbose)
    anyio.run(serve_http, early.get, served, http)


def _import_sdk() -> None:
    """What `serve_stdio` needs (the SDK, our handlers), imported ahead in a thread."""
    import importlib

    for module in ("app", "runner"):
        importlib.import_module(f"..server.{module}", __package__)


def _http_options(
    host: str | None,
    port: int | None,
    allow_host: list[str] | None,
    allow_origin: list[str] | None,
    verbose: bool,
    max_streams: int,
) -> HttpOptions:
    """Checked before anything starts: a refusal is exit 2."""
    from ..server.http import HttpOptions, check_options

    return check_options(
        HttpOptions(
            host=host or "127.0.0.1",
            port=DEFAULT_PORT if port is None else port,
            token=os.environ.get(TOKEN_ENV) or None,
            allow_hosts=tuple(allow_host or ()),
            allow_origins=tuple(allow_origin or ()),
            verbose=verbose,
            max_streams=max_streams,
        )
    )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)
