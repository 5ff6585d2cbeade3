"""`ontoskills export-embeddings`: registry export, or derived vectors for installed packages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import UsageError
from ..install import homelock
from ..lockfile import load
from ..safety import parse_spec
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc


def register(app: typer.Typer) -> None:
    @app.command("export-embeddings")
    def export_cmd(
        ctx: typer.Context,
        packages: Annotated[
            list[str] | None,
            typer.Argument(help="Installed author/pkg: derive vectors its modules lack."),
        ] = None,
        ontology_root: Annotated[
            Path | None,
            typer.Option(
                "--ontology-root", metavar="DIR", help="Compiled ontology tree to export."
            ),
        ] = None,
        output_dir: Annotated[
            Path | None,
            typer.Option(
                "--output-dir",
                metavar="DIR",
                help="Where model.onnx, tokenizer.json and the intents.json files go.",
            ),
        ] = None,
        model: Annotated[
            str | None,
            typer.Option(
                "--model", metavar="PATH", help="Encoder folder (model.onnx + tokenizer.json)."
            ),
        ] = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Write a registry's embeddings/ (model, tokenizer, one intents.json per folder
        covering every module), or with author/pkg compute vectors for installed modules that
        have none (kept as derived data, never in the verified package files)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            from ..embeddings.export import export_installed, export_tree  # heavy: numpy, onnx

            if ontology_root is not None or output_dir is not None:
                if packages or ontology_root is None or output_dir is None:
                    raise UsageError(
                        "registry export needs both --ontology-root and --output-dir, and no "
                        "package",
                        hint="or name installed packages: `ontoskills export-embeddings a/b`",
                    )
                with out.reporter() as rep:
                    res = export_tree(
                        ontology_root,
                        output_dir,
                        config=app_ctx.config,
                        offline=app_ctx.source_options().offline,
                        model_path=model,
                        reporter=rep,
                    )
                payload: dict[str, Any] = {
                    "command": "export-embeddings",
                    "output_dir": str(output_dir.absolute()),
                    "model": res.model.model if res.model else None,
                    "dimension": res.model.dimension if res.model else None,
                    "modules": res.modules,
                    "intents": res.intents,
                    "files": res.files,
                }
                return Doc(payload)
            if not packages:
                raise UsageError(
                    "name installed packages, or pass --ontology-root DIR --output-dir DIR",
                    hint="e.g. `ontoskills export-embeddings obra/superpowers`",
                )
            pids = [parse_spec(p)[0] for p in packages]
            home, config = app_ctx.home, app_ctx.config
            counts: dict[str, int] = {}
            with out.reporter() as rep, homelock.hold(home, "export-embeddings", on_wait=rep.note):
                lock = load(app_ctx.lockfile)
                for pid in pids:
                    counts[pid] = export_installed(home, config, lock, pid, rep)
            return Doc({"command": "export-embeddings", "derived": counts})

        def text(out: Output, doc: Doc) -> None:
            d = doc.payload
            if "derived" in d:
                for pid, n in d["derived"].items():
                    out.success(f"{pid}: {n} derived intent vectors")
            else:
                out.success(
                    f"exported {d['intents']} intent vectors of {d['modules']} modules into "
                    f"{len(d['files'])} intents.json files + model in {output_dir}"
                )

        run(app_ctx, body, text)
