"""`ontoskills mirror`: packages (or a lock's) into a static registry folder for networks
with no internet (install/mirror.py; docs/SCALING.md "Air-gapped mirrors")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from ..lockfile import load
from ..ownership import Keep
from ..safety import parse_spec
from ..words import plural
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import EmbeddingsOpt, ModelOpt
from ._output import Output, run

if TYPE_CHECKING:
    from ..install.mirror import MirrorResult

PackagesArg = Annotated[
    list[str] | None, typer.Argument(help="Packages to mirror (author/pkg).", show_default=False)
]
FromLockOpt = Annotated[
    Path | None,
    typer.Option("--from-lock", metavar="LOCK", help="Mirror exactly the files this lock names."),
]
ToOpt = Annotated[
    Path,
    typer.Option(
        "--to", metavar="DIR", help="The mirror folder (new, empty or an earlier mirror)."
    ),
]


def mirror_cmd(
    ctx: typer.Context,
    to: ToOpt,
    packages: PackagesArg = None,
    from_lock: FromLockOpt = None,
    with_embeddings: EmbeddingsOpt = False,
    model: ModelOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write a self-contained static registry of PACKAGES (or a lock's) into DIR: index,
    manifests, files, signed metadata (kept verifiable), and with --with-embeddings the
    intent vectors and an encoder. Re-running copies only what changed."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> MirrorResult:
        from ..install.mirror import MirrorRequest, mirror

        if bool(packages) == (from_lock is not None):
            raise UsageError(
                "name packages to mirror, or --from-lock LOCK (not both)",
                hint="e.g. `ontoskills mirror obra/superpowers --to ./mirror`",
            )
        ids = [parse_spec(p)[0] for p in packages or ()]
        lock = load(from_lock, required=True) if from_lock is not None else None
        req = MirrorRequest(
            to=to,
            packages=ids,
            lock=lock,
            with_embeddings=with_embeddings or model is not None,
            model_path=model,
            keep=app_ctx.keeps(registries=False) + _lock_keep(from_lock),
        )
        with out.reporter() as rep:
            session = app_ctx.session(rep)
            try:
                return mirror(session, req)
            finally:
                session.close()

    run(app_ctx, body, render)


def _lock_keep(lock: Path | None) -> list[Keep]:
    """The --from-lock file's folder: a mirror may sit beside it, never replace it."""
    return [] if lock is None else [Keep("the lock's folder", lock.parent, inside_ok=True)]


def render(out: Output, done: MirrorResult) -> None:
    for note in done.notes:
        out.info(note)
    names = ", ".join(f"{p.id} {p.version}" for p in done.packages)
    out.success(
        f"mirrored {names} from {done.registry}{' (signed)' if done.signed else ''} into "
        f"{done.to}: {plural(done.copied, 'file')} copied ({plural(done.bytes_copied, 'byte')}), "
        f"{done.skipped} already there, {done.removed} removed"
    )


def register(app: typer.Typer) -> None:
    app.command("mirror")(mirror_cmd)
