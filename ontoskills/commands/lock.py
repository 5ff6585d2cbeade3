"""`ontoskills lock export --format cyclonedx [--output F]`: the lock as an SBOM."""

from __future__ import annotations

import json as jsonlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..choices import Choice
from ..words import plural
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run


class SbomFormat(Choice):
    CYCLONEDX = "cyclonedx"  # CycloneDX 1.6 JSON


@dataclass(frozen=True)
class SbomExport:
    format: SbomFormat
    output: Path | None  # None: the SBOM is the output (stdout)
    packages: int
    sbom: str  # the document's text

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "lock export",
            "format": self.format.value,
            "output": None if self.output is None else str(self.output),
            "packages": self.packages,
            # --json without --output: the SBOM inside our document (one JSON on stdout)
            "sbom": jsonlib.loads(self.sbom) if self.output is None else None,
        }


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

    def body(out: Output) -> SbomExport:
        from .. import sbom
        from ..fsutil import atomic_write_text
        from ..lockfile import load

        lock = load(app_ctx.lockfile, required=True)
        text = sbom.export(lock, app_ctx.lockfile)
        if output is not None:
            atomic_write_text(output, text)
        return SbomExport(format, output, len(lock.packages), text)

    def render(out: Output, done: SbomExport) -> None:
        if done.output is None:  # without --json: the SBOM is the output
            out.stdout(done.sbom)
        else:
            packages = plural(done.packages, "package")
            out.success(f"wrote {done.output} ({done.format.value}, {packages})")

    run(app_ctx, body, render)


def register(app: typer.Typer) -> None:
    app.add_typer(lock_app, name="lock")
