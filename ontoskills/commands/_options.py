"""Options shared by several verbs, declared once (as twine's and poetry's shared options are):
every verb that takes one accepts and refuses the same words and says the same help.
Typer lists an enum's values as the choices and refuses any other word (exit 2) before the
command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..catalog.verify import VerifyMode
from ..config import SearchMode
from ..manifest import Tier

MinTrustOpt = Annotated[
    Tier | None, typer.Option("--min-trust", help="Refuse packages below this tier.")
]
EmbeddingsOpt = Annotated[
    bool,
    typer.Option("--with-embeddings", help="Also fetch intent vectors and the ONNX encoder."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="PATH",
        help="Use the encoder in this folder (model.onnx + tokenizer.json); implies "
        "--with-embeddings.",
    ),
]
ForceOpt = Annotated[
    bool, typer.Option("--force", help="Overwrite files you edited in installed packages.")
]
AllowDowngradeOpt = Annotated[
    bool, typer.Option("--allow-trust-downgrade", help="Accept a lower trust tier.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Treat hidden Unicode in skills as an error.")
]
# search, show and serve
VerifyOpt = Annotated[
    VerifyMode,
    typer.Option(
        "--verify",
        help="Check installed files before serving (fast re-hashes only files whose size or "
        "mtime changed).",
    ),
]
SearchModeOpt = Annotated[
    SearchMode,
    typer.Option(
        "--mode", help="auto: hybrid when the model and vectors are installed, else bm25."
    ),
]
KeysOpt = Annotated[
    Path | None,
    typer.Option(
        "--keys",
        metavar="DIR",
        help="Private keys folder (outside the registry; default "
        "$ONTOSKILLS_HOME/keys/<registry>; or ONTOSKILLS_KEYS_DIR).",
    ),
]
