"""`ontoskills registry init PATH` and `registry verify PATH|URL` (maintainers' tools)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import IntegrityError, UsageError
from ..registries import RegistryConfig, detect_kind, slug_for_url
from ..sources import BaseSource, open_source
from ..words import plural
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._options import KeysOpt
from ._output import Output, printable, run

if TYPE_CHECKING:
    from ..publish.registry import InitReport
    from ..publish.verify import VerifyReport


def open_for_verify(app_ctx: AppContext, location: str, out: Output) -> BaseSource:
    """The source for PATH|URL (its kind detected as `registry add` does)."""
    is_url = "://" in location or "@" in location
    url = location if is_url else str(Path(location).expanduser().absolute())
    if not is_url and not Path(url).exists():
        raise UsageError(f"{location} does not exist", hint="give a registry folder or URL")
    kind = detect_kind(url)
    config = RegistryConfig(slug_for_url(url), url, kind)
    return open_source(config, app_ctx.source_options())


def render_verify(out: Output, report: VerifyReport) -> None:
    for f in report.findings:
        where = f"{f.package}: " if f.package else ""
        line = f"[{f.code}] {where}{f.message}"
        if f.level == "error":
            out.err.print(f"error: {printable(line)}", markup=False)
        else:
            out.warn(line)
    at = f" at {report.commit[:12]}" if report.commit else ""
    summary = (
        f"{report.registry}{at}: {plural(report.packages, 'package')}, "
        f"{plural(report.skills, 'skill')}, {plural(report.modules, 'module')}, "
        f"{plural(report.files_checked, 'file')} hashed; "
        f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')}"
    )
    if report.ok:
        out.success(summary)
    else:
        out.err.print(printable(summary), markup=False)


NoGitOpt = Annotated[bool, typer.Option("--no-git", help="Plain folder, no git repository.")]
SparseOpt = Annotated[
    bool, typer.Option("--sparse", help="Also serve a per-package index (large registries).")
]
SignedOpt = Annotated[
    bool, typer.Option("--signed", help="Sign it: TUF metadata, new ed25519 keys.")
]
ThresholdOpt = Annotated[
    list[str] | None,
    typer.Option("--threshold", metavar="ROLE=N", help="Keys a role needs (default 1)."),
]
ExpiresOpt = Annotated[
    list[str] | None,
    typer.Option("--expires", metavar="ROLE=DURATION", help="Lifetime of a role's metadata."),
]
BinsOpt = Annotated[
    int, typer.Option("--bins", help="Hashed bins for the targets (a power of two).")
]


def init_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="New registry folder.")],
    no_git: NoGitOpt = False,
    author_name: Annotated[str | None, typer.Option("--author-name")] = None,
    author_email: Annotated[str | None, typer.Option("--author-email")] = None,
    sparse: SparseOpt = False,
    signed: SignedOpt = False,
    keys: KeysOpt = None,
    threshold: ThresholdOpt = None,
    expires: ExpiresOpt = None,
    bins: BinsOpt = 16,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Create a new registry (index.json, README, packages/; a git repo unless --no-git).
    With --signed on an existing registry: sign everything it serves, in place."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> InitReport:
        from ..publish import gitops
        from ..publish.registry import (
            InitReport,
            SignedInit,
            check_new_registry_folder,
            init_registry,
            is_existing_registry,
        )

        check_new_registry_folder(path, signed=signed)
        existing = signed and is_existing_registry(path)
        author = None
        if existing and not no_git and gitops.is_repo(path):
            repo = gitops.pygit2.Repository(str(path))
            author = gitops.author_for(repo, author_name, author_email)
        elif not existing and not no_git:
            author = gitops.author_for(None, author_name, author_email)
        sign = None
        if signed:
            from ..signing.keys import resolve_keys_dir
            from ..signing.repo import Policy

            policy = Policy.from_options(threshold or [], expires or [], bins)
            sign = SignedInit(resolve_keys_dir(keys, path), policy)
        elif threshold or expires or keys:
            raise UsageError("--keys, --threshold and --expires go with --signed")
        commit = init_registry(path, git=not no_git, author=author, sparse=sparse, signed=sign)
        return InitReport(path, existing, commit, sign.written if sign is not None else None)

    run(app_ctx, body, render_init)


def render_init(out: Output, report: InitReport) -> None:
    what = "signed existing registry" if report.existing else "created registry"
    commit = report.commit
    out.success(f"{what} {report.path}" + (f" (commit {commit[:12]})" if commit else ""))
    if report.keys is not None:
        out.info(f"  private keys in {report.keys.keys_dir} (never commit them):")
        for role, ids in report.keys.keyids.items():
            out.info(f"    {role}: {', '.join(ids)}")
        root = report.path / "metadata" / "root.json"
        out.info(f"  clients pin {root} with `ontoskills registry add NAME URL --root root.json`")


def verify_cmd(
    ctx: typer.Context,
    location: Annotated[str, typer.Argument(help="Registry folder, git URL or https URL.")],
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Check every index entry, manifest, module and file hash of a registry."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> VerifyReport:
        from ..publish.verify import verify_registry

        source = open_for_verify(app_ctx, location, out)
        is_url = "://" in location or "@" in location
        local = None if is_url else Path(location).expanduser().absolute()
        try:
            with out.reporter() as rep:
                report = verify_registry(source, rep, local)
        finally:
            source.close()
        if not report.ok:
            out.result.exit_code = IntegrityError.exit_code
        return report

    run(app_ctx, body, render_verify)


def register_into(registry_app: typer.Typer) -> None:
    registry_app.command("init")(init_cmd)
    registry_app.command("verify")(verify_cmd)
