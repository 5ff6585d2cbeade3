"""`ontoskills export-embeddings`: registry export, or derived vectors for installed packages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from ..install import homelock
from ..lockfile import load
from ..safety import parse_spec
from ..words import plural
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

if TYPE_CHECKING:  # numpy, onnx: imported when the verb runs
    from ..embeddings.export import Derived, ExportResult

PackagesArg = Annotated[
    list[str] | None,
    typer.Argument(help="Installed author/pkg: derive vectors its modules lack."),
]
OntologyRootOpt = Annotated[
    Path | None,
    typer.Option("--ontology-root", metavar="DIR", help="Compiled ontology tree to export."),
]
OutputDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--output-dir",
        metavar="DIR",
        help="Where model.onnx, tokenizer.json and the intents.json files go.",
    ),
]
EncoderOpt = Annotated[
    str | None,
    typer.Option("--model", metavar="PATH", help="Encoder folder (model.onnx + tokenizer.json)."),
]


def export_cmd(
    ctx: typer.Context,
    packages: PackagesArg = None,
    ontology_root: OntologyRootOpt = None,
    output_dir: OutputDirOpt = None,
    model: EncoderOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write a registry's embeddings/ (model, tokenizer, one intents.json per folder
    covering every module), or with author/pkg compute vectors for installed modules that
    have none (kept as derived data, never in the verified package files)."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> ExportResult | Derived:
        if ontology_root is not None or output_dir is not None:
            if packages or ontology_root is None or output_dir is None:
                raise UsageError(
                    "registry export needs both --ontology-root and --output-dir, and no package",
                    hint="or name installed packages: `ontoskills export-embeddings a/b`",
                )
            return _export_tree(app_ctx, out, ontology_root, output_dir, model)
        if not packages:
            raise UsageError(
                "name installed packages, or pass --ontology-root DIR --output-dir DIR",
                hint="e.g. `ontoskills export-embeddings obra/superpowers`",
            )
        return _derive(app_ctx, out, [parse_spec(p)[0] for p in packages])

    run(app_ctx, body, render)


def _export_tree(
    app_ctx: AppContext, out: Output, root: Path, output_dir: Path, model: str | None
) -> ExportResult:
    from ..embeddings.export import export_tree

    with out.reporter() as rep:
        return export_tree(
            root,
            output_dir,
            config=app_ctx.config,
            offline=app_ctx.source_options().offline,
            model_path=model,
            reporter=rep,
        )


def _derive(app_ctx: AppContext, out: Output, pids: list[str]) -> Derived:
    from ..embeddings.export import Derived, export_installed

    home, config = app_ctx.home, app_ctx.config
    counts: dict[str, int] = {}
    with out.reporter() as rep, homelock.hold(home, "export-embeddings", on_wait=rep.note):
        lock = load(app_ctx.lockfile)
        for pid in pids:
            counts[pid] = export_installed(home, config, lock, pid, rep)
    return Derived(counts)


def render(out: Output, done: ExportResult | Derived) -> None:
    from ..embeddings.export import Derived

    if isinstance(done, Derived):
        for pid, n in done.counts.items():
            out.success(f"{pid}: {plural(n, 'derived intent vector')}")
    else:
        out.success(
            f"exported {plural(done.intents, 'intent vector')} of "
            f"{plural(done.modules, 'module')} into "
            f"{plural(len(done.files), 'intents.json file')} + model in {done.output_dir}"
        )


def register(app: typer.Typer) -> None:
    app.command("export-embeddings")(export_cmd)
