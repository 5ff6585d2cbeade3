"""`ontoskills install [SPEC...]`: add packages (or skills) and record them in the lock."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.operations import install
from ..install.options import InstallOptions
from . import _context
from ._context import JsonOpt, QuietOpt
from ._mutation import run_mutation
from ._options import (
    AllowDowngradeOpt,
    EmbeddingsOpt,
    ForceOpt,
    MinTrustOpt,
    ModelOpt,
    StrictOpt,
)


def register(app: typer.Typer) -> None:
    @app.command("install")
    def install_cmd(
        ctx: typer.Context,
        specs: Annotated[
            list[str] | None,
            typer.Argument(
                help="author/pkg or author/pkg/skill; an Agent Skills repository: "
                "github:owner/repo[/skill][#ref], https://host/owner/repo(.git), a path; "
                "none = the lock"
            ),
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
