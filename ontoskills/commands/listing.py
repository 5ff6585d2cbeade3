"""`ontoskills list` and `ontoskills info PKG`: what is installed."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.queries import list_packages, package_info
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """List installed packages with their version, trust tier and skills."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            with out.reporter() as rep:
                rows = list_packages(app_ctx.session(rep))
            return Doc({"lockfile": str(app_ctx.lockfile), "packages": rows})

        def text(out: Output, doc: Doc) -> None:
            rows = doc.payload["packages"]
            if not rows:
                out.info("no packages installed")
                return
            out.table(
                ("package", "version", "trust", "skills", "files"),
                (
                    (
                        r["package"],
                        r["version"],
                        r["trust_tier"],
                        f"{r['skills']['enabled']}/{r['skills']['installed']}",
                        str(r["files"]),
                    )
                    for r in rows
                ),
            )

        run(app_ctx, body, text)

    @app.command("info")
    def info_cmd(
        ctx: typer.Context,
        package: Annotated[str, typer.Argument(help="author/pkg")],
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Show an installed package: registry, commit, integrity, skills."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            with out.reporter() as rep:
                return Doc(package_info(app_ctx.session(rep), package))

        def text(out: Output, doc: Doc) -> None:
            info = doc.payload
            reg = info["registry"]
            lines = [
                f"{info['package']} {info['version']}  [{info['trust_tier']}]",
                info["description"] or "",
                f"registry:  {reg['name']} ({reg['kind']}) {reg['url']}"
                + (f" @ {reg['commit'][:12]}" if reg["commit"] else ""),
                f"path:      {info['path']}",
                f"integrity: {info['integrity']}",
                f"files:     {info['files']} ({info['bytes']} bytes)",
                "skills:",
            ]
            for s in info["skills"]:
                mark = "on " if s["enabled"] else "off"
                lines.append(f"  [{mark}] {s['id']}: {s['description'][:90]}")
            out.stdout("\n".join(line for line in lines if line is not None))

        run(app_ctx, body, text)
