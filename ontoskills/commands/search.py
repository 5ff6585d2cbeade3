"""`ontoskills search "QUERY"`: rank installed, enabled skills (same code as the MCP tool)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..catalog.verify import VERIFY_MODES
from ..manifest import TIERS
from ..search.service import MAX_TOP_K, MODES, SkillService
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

VerifyOpt = Annotated[
    str,
    typer.Option(
        "--verify",
        help=f"Check installed files before serving: {', '.join(VERIFY_MODES)} "
        "(fast re-hashes only files whose size or mtime changed).",
    ),
]
MAX_PROBLEMS_SHOWN = 10


def check_choice(value: str, choices: tuple[str, ...], flag: str) -> str:
    if value not in choices:
        raise typer.BadParameter(f"must be one of {', '.join(choices)}", param_hint=flag)
    return value


def open_service(app: AppContext, verify: str) -> SkillService:
    return SkillService(
        app.home, app.lockfile, app.config, verify=check_choice(verify, VERIFY_MODES, "--verify")
    )


def report_problems(out: Output, service: SkillService) -> None:
    """Files that failed verification are not served; say so on stderr."""
    problems = service.problems
    for p in problems[:MAX_PROBLEMS_SHOWN]:
        out.warn(f"not served: {p}")
    if len(problems) > MAX_PROBLEMS_SHOWN:
        out.warn(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more problems")
    if problems:
        out.info("hint: `ontoskills doctor` explains; `ontoskills install --force` repairs")


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
        mode: Annotated[
            str,
            typer.Option(
                "--mode",
                help=f"{' | '.join(MODES)} (auto: hybrid when the "
                "model and vectors are installed, else bm25).",
            ),
        ] = "auto",
        min_trust: Annotated[
            str | None,
            typer.Option("--min-trust", help=f"Hide skills below this tier ({', '.join(TIERS)})."),
        ] = None,
        verify: VerifyOpt = "full",
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Find the installed skills that match a need (BM25, semantic or hybrid)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        check_choice(mode, MODES, "--mode")
        if min_trust is not None:
            check_choice(min_trust, TIERS, "--min-trust")

        def body(out: Output) -> None:
            service = open_service(app_ctx, verify)
            report_problems(out, service)
            response = service.search(query, top_k=top_k, mode=mode, min_trust=min_trust)
            if app_ctx.json:
                doc = response.to_json()
                doc.pop("schema_version")
                out.json(doc)
            else:
                out.stdout(response.render())

        run(app_ctx, body)
