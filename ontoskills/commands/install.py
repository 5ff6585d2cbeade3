"""`ontoskills install [SPEC...]`: add packages (or skills) and record them in the lock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from ..errors import OntoskillsError
from ..install.mutation import Report
from ..install.operations import install
from ..install.options import InstallOptions
from ..install.session import Session
from ..manifest import Tier
from ..progress import Reporter
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

MinTrustOpt = Annotated[
    Tier | None, typer.Option("--min-trust", help="Refuse packages below this tier.")
]
EmbeddingsOpt = Annotated[
    bool,
    typer.Option("--with-embeddings", help="Also fetch intent vectors and the ONNX encoder."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="PATH",
        help="Use the encoder in this folder (model.onnx + tokenizer.json); implies "
        "--with-embeddings.",
    ),
]
ForceOpt = Annotated[
    bool, typer.Option("--force", help="Overwrite files you edited in installed packages.")
]
AllowDowngradeOpt = Annotated[
    bool, typer.Option("--allow-trust-downgrade", help="Accept a lower trust tier.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Treat hidden Unicode in skills as an error.")
]


def render_report(out: Output, report: Report) -> None:
    """The text of every mutating verb (its warnings are already on stderr)."""
    for c in report.changes:
        if c.action == "unchanged":
            out.info(f"  {c.package_id} {c.version} already up to date")
        elif c.action == "removed":
            out.success(f"removed {c.package_id}")
        elif c.action in ("enabled", "disabled"):
            out.success(f"{c.action} {c.package_id}: {', '.join(c.skills)}")
        else:
            prev = (
                f" (was {c.previous_version})"
                if c.previous_version and c.previous_version != c.version
                else ""
            )
            out.success(
                f"{c.action} {c.package_id} {c.version}{prev} [{c.trust_tier}] "
                f"{c.files} files, {len(c.skills)} skills"
            )
            if c.disabled:
                n = len(c.disabled)
                out.info(
                    f"  {n} of {len(c.skills)} skills installed but disabled (opt-in, not "
                    f"served by search or the MCP server): {', '.join(c.disabled)}"
                )
                out.info(f"  serve {'them' if n > 1 else 'it'} with: {c.enable}")


def run_mutation(
    app: AppContext, action: Callable[[Session], Report], *, warm: bool = False
) -> None:
    """Run a mutating verb's domain call with a progress reporter and render its report;
    `warm`: then build the search index (install, ci, update: the verbs that fetch)."""

    def body(out: Output) -> Report:
        with out.reporter() as rep:
            report = action(app.session(rep))
            if warm:
                warm_search_index(app, report, rep)
            return report

    run(app, body, render_report)


def warm_search_index(app: AppContext, report: Report, rep: Reporter) -> None:
    """Build the search index now when the home has an encoder and the tree changed.

    Its first build encodes every skill's description (seconds per hundred skills: 18 s for
    the 626 of the full registry), and without this the first `search`, or the first MCP
    call of a server an agent just started, paid for it. A failure here loses nothing (the
    index is derived data; the next search builds it), so it is a warning, not an error.
    """
    if not report.lock_changed and all(c.action == "unchanged" for c in report.changes):
        return
    from ..lockfile import load

    try:
        if load(app.lockfile).embeddings is None:
            return
        from ..search.service import SkillService  # numpy, pyoxigraph: only on this path

        rep.stage("indexing the installed skills for search")
        SkillService(app.home, app.lockfile, app.config).refresh()
    except OntoskillsError as exc:
        rep.warn(f"search index not built now ({exc.message}); the first search builds it")


def register(app: typer.Typer) -> None:
    @app.command("install")
    def install_cmd(
        ctx: typer.Context,
        specs: Annotated[
            list[str] | None, typer.Argument(help="author/pkg or author/pkg/skill; none = the lock")
        ] = None,
        with_embeddings: EmbeddingsOpt = False,
        min_trust: MinTrustOpt = None,
        locked: Annotated[
            bool, typer.Option("--locked", help="Fail (exit 3) if the lock would change.")
        ] = False,
        frozen: Annotated[
            bool, typer.Option("--frozen", help="Install the lock as written, no resolution.")
        ] = False,
        force: ForceOpt = False,
        allow_trust_downgrade: AllowDowngradeOpt = False,
        strict: StrictOpt = False,
        model: ModelOpt = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Install packages from the registry and record them in the lockfile."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        opts = InstallOptions(
            with_embeddings=with_embeddings or model is not None,
            model_path=model,
            min_trust=min_trust,
            locked=locked,
            frozen=frozen,
            strict=strict,
            force=force,
            allow_trust_downgrade=allow_trust_downgrade,
        )

        run_mutation(app_ctx, lambda s: install(s, list(specs or []), opts), warm=True)
