"""Vectors we encoded for intents without stored ones, kept across index rebuilds.

A lock change rebuilds the index; without this cache every rebuild would re-encode every
intent of every module that ships no vectors (~1,700 texts for the full registry, seconds of
CPU). Keyed by the model's identity; text -> row. Derived data: safe to delete.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .. import jsonio
from ..fsutil import atomic_write_bytes, remove_file

_DIR = "vector-cache"


class VectorCache:
    def __init__(
        self, derived_dir: Path, model_identity: str, encode: Callable[[Sequence[str]], np.ndarray]
    ) -> None:
        name = hashlib.sha256(model_identity.encode()).hexdigest()[:24]
        self.folder = derived_dir / _DIR
        self.meta_path = self.folder / f"{name}.json"
        self.vec_path = self.folder / f"{name}.npy"
        self._encode = encode
        self.texts: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        with contextlib.suppress(OSError, ValueError, TypeError):
            texts = jsonio.loads_derived(self.meta_path.read_bytes())
            matrix = np.load(self.vec_path, allow_pickle=False)
            if isinstance(texts, list) and matrix.ndim == 2 and matrix.shape[0] == len(texts):
                self.texts, self.matrix = [str(t) for t in texts], matrix.astype(np.float32)
        self.row = {t: i for i, t in enumerate(self.texts)}
        self.encoded = 0  # texts actually run through the model by this instance

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        # By length: the encoder pads each batch to its longest text (~2x faster sorted).
        missing = sorted(dict.fromkeys(t for t in texts if t not in self.row), key=len)
        if missing:
            fresh = np.asarray(self._encode(missing), dtype=np.float32)
            self.encoded += len(missing)
            if self.matrix.shape[0] and self.matrix.shape[1] != fresh.shape[1]:
                self.texts, self.matrix, self.row = [], np.zeros((0, 0), np.float32), {}
            self.matrix = fresh if not self.matrix.shape[0] else np.vstack([self.matrix, fresh])
            for t in missing:
                self.row[t] = len(self.texts)
                self.texts.append(t)
            self._save()
        return self.matrix[[self.row[t] for t in texts]]

    def _save(self) -> None:
        buf = io.BytesIO()
        np.save(buf, self.matrix, allow_pickle=False)
        with contextlib.suppress(OSError):
            atomic_write_bytes(self.vec_path, buf.getvalue())
            atomic_write_bytes(self.meta_path, json.dumps(self.texts).encode())
            for old in self.folder.iterdir():
                if old not in (self.meta_path, self.vec_path):
                    with contextlib.suppress(OSError):
                        remove_file(old)
