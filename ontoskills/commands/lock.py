"""`ontoskills lock export --format cyclonedx [--output F]`: the lock as an SBOM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..choices import Choice
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc


class SbomFormat(Choice):
    CYCLONEDX = "cyclonedx"  # CycloneDX 1.6 JSON


lock_app = typer.Typer(help="The lockfile: export it.", no_args_is_help=True)


@lock_app.command("export")
def export_cmd(
    ctx: typer.Context,
    format: Annotated[
        SbomFormat, typer.Option("--format", help="Document format (CycloneDX 1.6 JSON).")
    ] = SbomFormat.CYCLONEDX,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write here instead of stdout."),
    ] = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Every locked package, version, registry, commit and file sha256 as an SBOM."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Doc:
        import json as jsonlib

        from .. import sbom
        from ..fsutil import atomic_write_text
        from ..lockfile import load

        lock = load(app_ctx.lockfile, required=True)
        text = sbom.export(lock, app_ctx.lockfile)
        if output is not None:
            atomic_write_text(output, text)
        return Doc(
            {
                "command": "lock export",
                "format": format.value,
                "output": None if output is None else str(output),
                "packages": len(lock.packages),
                # --json without --output: the SBOM inside our document (one JSON on stdout)
                "sbom": jsonlib.loads(text) if output is None else None,
            },
            text=text if output is None else None,  # without --json: the SBOM is the output
        )

    def render(out: Output, doc: Doc) -> None:
        if doc.text is not None:
            out.stdout(doc.text)
        else:
            p = doc.payload
            out.success(f"wrote {p['output']} ({p['format']}, {p['packages']} packages)")

    run(app_ctx, body, render)


def register(app: typer.Typer) -> None:
    app.add_typer(lock_app, name="lock")
