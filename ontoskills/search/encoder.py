"""Find the sentence encoder for semantic search.

Stand-in for `ontoskills.embeddings.model.load_encoder(home, config)` (branch `embeddings`):
at merge the service's default factory switches to that one call.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..embeddings.encoder import Encoder
from ..paths import Home

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


def model_dir(home: Home, config: Config) -> Path | None:
    """config [embeddings].path, else ontologies/system/embeddings, when both files exist."""
    candidates = []
    if isinstance(config.embeddings.get("path"), str):
        candidates.append(Path(config.embeddings["path"]).expanduser())
    candidates.append(home.embeddings_dir)
    for folder in candidates:
        if (folder / MODEL_FILE).is_file() and (folder / TOKENIZER_FILE).is_file():
            return folder
    return None


def load_encoder(home: Home, config: Config) -> Encoder | None:
    folder = model_dir(home, config)
    if folder is None:
        return None
    threads = config.embeddings.get("threads")
    return Encoder(
        folder / MODEL_FILE,
        folder / TOKENIZER_FILE,
        threads=threads if isinstance(threads, int) and threads > 0 else None,
    )


def encoder_identity(home: Home, config: Config) -> str:
    """Changes when the model files change (part of the snapshot key)."""
    folder = model_dir(home, config)
    if folder is None:
        return "none"
    st = [(folder / n).stat() for n in (MODEL_FILE, TOKENIZER_FILE)]
    return f"{folder}:" + ",".join(f"{s.st_size}-{s.st_mtime_ns}" for s in st)
