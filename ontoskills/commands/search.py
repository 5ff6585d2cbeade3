"""`ontoskills search "QUERY"`: rank installed, enabled skills (same code as the MCP tool)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ..catalog.verify import VerifyMode
from ..config import SearchMode
from ..manifest import Tier
from ..search import MAX_TOP_K
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import SearchModeOpt, VerifyOpt
from ._output import Output, run
from ._service import open_service, report_problems

if TYPE_CHECKING:
    from ..search.answer import SearchResponse


def register(app: typer.Typer) -> None:
    @app.command("search")
    def search_cmd(
        ctx: typer.Context,
        query: Annotated[
            str, typer.Argument(help="What you need, in your own words, or a skill id.")
        ],
        top_k: Annotated[
            int, typer.Option("--top-k", "-k", min=1, max=MAX_TOP_K, help="How many results.")
        ] = 5,
        mode: SearchModeOpt = SearchMode.AUTO,
        min_trust: Annotated[
            Tier | None, typer.Option("--min-trust", help="Hide skills below this tier.")
        ] = None,
        verify: VerifyOpt = VerifyMode.FULL,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Find the installed skills that match a need (BM25, semantic or hybrid)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> SearchResponse:
            service = open_service(app_ctx, verify, out)
            report_problems(out, service)
            response = service.search(query, top_k=top_k, mode=mode, min_trust=min_trust)
            if not service.skills():  # say where we looked: a project, or the global home
                out.info(f"searched {app_ctx.where}")
            return response

        run(app_ctx, body, lambda out, response: out.stdout(response.render()))
