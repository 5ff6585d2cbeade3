"""`ontoskills pack DIR [--from-skill-md]`: build or refresh a package's package.json."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from ..words import plural
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run

if TYPE_CHECKING:
    from ..publish.pack import PackResult


def register(app: typer.Typer) -> None:
    @app.command("pack")
    def pack_cmd(
        ctx: typer.Context,
        directory: Annotated[Path, typer.Argument(help="Package folder (compiled skills).")],
        from_skill_md: Annotated[
            bool,
            typer.Option("--from-skill-md", help="Generate Turtle from SKILL.md folders first."),
        ] = False,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="With --from-skill-md: write the package here."),
        ] = None,
        package_id: Annotated[
            str | None, typer.Option("--id", help="author/package (else from package.json).")
        ] = None,
        version: Annotated[
            str | None, typer.Option("--version", help="Version (else from package.json).")
        ] = None,
        description: Annotated[
            str | None, typer.Option("--description", help="Package description.")
        ] = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Write package.json (manifest + `files` hashes) for a folder of skills."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out_: Output) -> PackResult:
            # imported here: markdown-it/pyoxigraph are not needed by every other verb
            from ..publish.pack import pack
            from ..publish.skillmd import convert

            if out is not None and not from_skill_md:
                raise UsageError("--out only applies with --from-skill-md")
            if from_skill_md:
                result = convert(
                    directory,
                    out,
                    package_id=package_id,
                    version=version,
                    description=description,
                    keep=app_ctx.keeps() if out is not None else (),
                )
            else:
                result = pack(
                    directory, package_id=package_id, version=version, description=description
                )
            return result

        def text(out_: Output, result: PackResult) -> None:
            state = "wrote" if result.written else "unchanged"
            out_.success(
                f"{state} {result.path}: {result.package_id} {result.version}, "
                f"{plural(len(result.skill_ids), 'skill')}, "
                f"{plural(len(result.modules), 'module')}, {plural(len(result.files), 'file')}"
            )

        run(app_ctx, body, text)
