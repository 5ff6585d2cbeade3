from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ontoskills.catalog.vectorcache import VectorCache
from tests.helpers.registry import unit_vector


class Counting:
    """A deterministic stand-in for a sentence encoder that counts what it encodes."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.seen: list[str] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.asarray([unit_vector(t, self.dim) for t in texts], dtype=np.float32)


def test_rebuilds_only_encode_new_texts(tmp_path: Path) -> None:
    enc = Counting()
    first = VectorCache(tmp_path, "model-a", enc).encode(["a", "b", "a"])
    assert enc.seen == ["a", "b"]
    assert np.allclose(first[0], first[2])
    again = VectorCache(tmp_path, "model-a", enc)  # a new process / rebuild
    out = again.encode(["b", "c"])
    assert enc.seen == ["a", "b", "c"]
    assert np.allclose(out[0], first[1])
    assert again.encoded == 1


def test_other_model_or_damaged_cache_starts_over(tmp_path: Path) -> None:
    enc = Counting()
    VectorCache(tmp_path, "model-a", enc).encode(["a"])
    VectorCache(tmp_path, "model-b", enc).encode(["a"])
    assert enc.seen == ["a", "a"]
    for p in (tmp_path / "vector-cache").iterdir():
        p.write_bytes(b"junk")
    VectorCache(tmp_path, "model-b", enc).encode(["a"])
    assert enc.seen == ["a", "a", "a"]
