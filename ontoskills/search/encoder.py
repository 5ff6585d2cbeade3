"""Which sentence encoder search uses, and a cheap fingerprint of it for cache keys."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Config
from ..embeddings.encoder import Encoder
from ..paths import Home

MODEL_FILES = ("model.onnx", "tokenizer.json")


def load_encoder(home: Home, config: Config) -> Encoder | None:
    """The installed encoder (embeddings/model.py decides where it lives), or None."""
    from ..embeddings.model import load_encoder as load

    return load(home, config)


def _folders(home: Home, config: Config) -> list[Path]:
    folders = [home.embeddings_dir]
    if config.embeddings.path:
        folders.append(Path(config.embeddings.path).expanduser())
    return folders


def encoder_identity(home: Home, config: Config) -> str:
    """Changes when any candidate model file appears, disappears or changes."""
    parts = []
    for folder in _folders(home, config):
        for name in MODEL_FILES:
            try:
                st = os.stat(folder / name)
                parts.append(f"{folder / name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                continue
    return ";".join(parts) or "none"


def derived_vectors_identity(home: Home) -> str:
    """Stats of the vectors `install --with-embeddings` derived (state/derived/vectors/)."""
    root = home.derived_dir / "vectors"
    parts = []
    if root.is_dir():
        for path in sorted(root.glob("*/*.npz")):
            try:
                st = path.stat()
            except OSError:
                continue
            parts.append(f"{path.parent.name}/{path.name}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)
