"""`ontoskills publish DIR --registry PATH|GIT-URL`: validate and publish a packed package."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..manifest import Tier
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run

if TYPE_CHECKING:
    from ..publish.publish import PublishResult


def render(out: Output, r: PublishResult) -> None:
    if r.dry_run:
        out.stdout(f"# dry run: {r.package_id} {r.version} -> {r.registry} ({r.target})")
        for f in r.files:
            flag = " x" if f["executable"] else ""
            out.stdout(f"{f['sha256']}  {f['size']:>9}{flag}  {f['path']}")
        for text in r.diff.values():
            if text:
                out.stdout(text)
        out.info("dry run: nothing was written")
        return
    was = f" (was {r.previous_version})" if r.previous_version else ""
    out.success(f"published {r.package_id} {r.version}{was} [{r.trust_tier}] -> {r.registry}")
    if r.signed:
        out.info(f"  signed: {', '.join(p.rsplit('/', 1)[-1] for p in r.signed)}")
    if r.commit:
        out.info(f"  commit {r.commit}")
    if r.branch:
        out.info(f"  pushed branch {r.branch}: open a pull request to merge it")


def register(app: typer.Typer) -> None:
    @app.command("publish")
    def publish_cmd(
        ctx: typer.Context,
        directory: Annotated[Path, typer.Argument(help="Packed package folder.")],
        registry: Annotated[
            str, typer.Option("--registry", help="Registry: local path, git URL or oci://host/ns.")
        ],
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Write nothing; show files, hashes and diffs.")
        ] = False,
        message: Annotated[
            str | None, typer.Option("--message", "-m", help="Commit message.")
        ] = None,
        trust: Annotated[
            Tier | None,
            typer.Option(
                "--trust",
                help="Trust tier on a local registry you maintain; never raises an existing "
                "package's tier.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Accept a name close to an existing one.")
        ] = False,
        author_name: Annotated[
            str | None, typer.Option("--author-name", help="Commit author name.")
        ] = None,
        author_email: Annotated[
            str | None, typer.Option("--author-email", help="Commit author email.")
        ] = None,
        keys: Annotated[
            Path | None,
            typer.Option(
                "--keys",
                metavar="DIR",
                help="Signed registry: the folder with the bins, snapshot and timestamp keys.",
            ),
        ] = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Validate a package and publish it (commit; push a branch to a remote)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)
        from ..publish.publish import PublishOptions, publish

        opts = PublishOptions(
            registry=registry,
            dry_run=dry_run,
            message=message,
            trust=trust,
            force=force,
            author_name=author_name,
            author_email=author_email,
            keys_dir=keys,
            keep=tuple(app_ctx.keeps(registries=False)),
        )

        def body(out: Output) -> PublishResult:
            with out.reporter() as rep:
                return publish(directory, opts, rep)

        run(app_ctx, body, render)
