"""`ontoskills install [SPEC...]`: add packages (or skills) and record them in the lock."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import UsageError
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
from ._project import edit_manifest, run_sync, wanted_specs


def register(app: typer.Typer) -> None:
    @app.command("install")
    def install_cmd(
        ctx: typer.Context,
        specs: Annotated[
            list[str] | None,
            typer.Argument(
                help="author/pkg or author/pkg/skill (@VERSION: only if it is the registry's "
                "current one); an Agent Skills repository: github:owner/repo[/skill][#ref], "
                "https://host/owner/repo(.git), a path; none = the lock"
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

        if app_ctx.project is not None:  # npm: `install` in a project is `sync`, or `add`
            _project_install(app_ctx, list(specs or []), opts)
            return
        run_mutation(app_ctx, lambda s: install(s, list(specs or []), opts), warm=True)


def _project_install(app: _context.AppContext, specs: list[str], opts: InstallOptions) -> None:
    """In a project, `install` with no spec syncs it and `install SPEC...` declares the
    specs in the nearest manifest first (npm saves too; docs/CLI.md)."""
    from ..project import MANIFEST_NAME

    if not specs:
        run_sync(app, opts)
        return
    if opts.locked or opts.frozen:
        raise UsageError(
            "--locked/--frozen install the lock: name no package",
            hint=f"`ontoskills add SPEC` declares a package in {MANIFEST_NAME}",
        )
    run_sync(app, opts, edit=edit_manifest(wanted_specs(app, specs, None)))
