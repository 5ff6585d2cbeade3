"""`ontoskills list` and `ontoskills info PKG`: what is installed."""

from __future__ import annotations

from typing import Annotated

import typer

from ..install.queries import PackageInfo, PackageList, list_packages, package_info
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """List installed packages with their version, trust tier and skills."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> PackageList:
            with out.reporter() as rep:
                return list_packages(app_ctx.session(rep))

        def text(out: Output, listed: PackageList) -> None:
            if not listed.packages:
                out.info(f"no packages installed in {app_ctx.where}")
                return
            if app_ctx.project is not None:  # the global home's listing stays as it was
                out.info(app_ctx.where)
            out.table(
                ("package", "version", "trust", "skills", "files"),
                (
                    (r.package, r.version, r.trust_tier, f"{r.enabled}/{r.installed}", str(r.files))
                    for r in listed.packages
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

        def body(out: Output) -> PackageInfo:
            with out.reporter() as rep:
                return package_info(app_ctx.session(rep), package)

        def text(out: Output, info: PackageInfo) -> None:
            lines = [
                f"{info.package} {info.version}  [{info.trust_tier}]",
                info.description or "",
                f"registry:  {info.registry} ({info.registry_kind}) {info.registry_url}"
                + (f" @ {info.commit[:12]}" if info.commit else ""),
                f"path:      {info.path}",
                f"integrity: {info.integrity}",
                f"files:     {info.files} ({info.bytes} bytes)",
                "skills:",
            ]
            for s in sorted(info.skills, key=lambda s: s.id):  # as list, tree and why: by id
                mark = "on " if s.enabled else "off"
                lines.append(f"  [{mark}] {s.id}: {_cut(s.description, 90)}")
            out.stdout("\n".join(lines))

        run(app_ctx, body, text)


def _cut(text: str, width: int) -> str:
    """At most `width` characters, and a visible "…" when cut (a cut used to look like the
    author's own last word: "before merging to verify work m")."""
    return text if len(text) <= width else text[: width - 1] + "…"
