"""Encoder behaviour with the tiny model: pooling, normalisation, batching, validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from ontoskills.embeddings.encoder import Encoder, ModelError, _batches
from ontoskills.errors import EXIT_INTEGRITY
from ontoskills.query import valid_text
from tests.helpers.tinymodel import build_onnx, build_tokenizer

TEXTS = ["debug failing tests", "write a plan", "review code before merge", "fix", "add color"]


def _reference(folder: Path, text: str) -> np.ndarray:
    """Mean pooling written out by hand over the unpadded tokens."""
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    enc = tok.encode(text)
    ids = np.asarray([enc.ids], dtype=np.int64)
    sess = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
    hidden = sess.run(None, feeds)[0][0]
    v = hidden.mean(axis=0)
    return v / np.linalg.norm(v)


def test_single_query_is_mean_pooled_and_normalised(tiny_model: Path) -> None:
    enc = Encoder(tiny_model / "model.onnx", tiny_model / "tokenizer.json")
    v = enc.encode_one("debug failing tests")
    assert v.dtype == np.float32 and v.shape == (8,)
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(v, _reference(tiny_model, "debug failing tests"), atol=1e-6)


def test_batches_padded_to_longest_equal_single_queries(tiny_model: Path) -> None:
    enc = Encoder(tiny_model / "model.onnx", tiny_model / "tokenizer.json")
    batch = enc.encode(TEXTS, batch_size=2)  # 3 batches of different widths
    assert batch.shape == (len(TEXTS), 8)
    for text, row in zip(TEXTS, batch, strict=True):
        np.testing.assert_allclose(row, enc.encode_one(text), atol=1e-6)
    assert enc.encode([]).shape == (0, 8)
    # different texts give different vectors (the padding did not leak into the mean)
    assert float(np.dot(batch[0], batch[3])) < 0.99


class _Enc:
    def __init__(self, n: int) -> None:
        self.ids = list(range(n))


def test_batches_bound_padded_tokens_not_only_rows() -> None:
    """A run's memory grows with rows x longest text: long texts go a few at a time, short
    ones many, a text longer than the budget alone; order is kept."""
    lengths = [4, 4, 4, 4, 100, 100, 100, 300, 4]
    groups = _batches([_Enc(n) for n in lengths], rows=3, tokens=256)
    assert [[len(e.ids) for e in g] for g in groups] == [
        [4, 4, 4],  # the row cap
        [4, 100],  # padded to 2 x 100 = 200 <= 256; a third 100 would make 300
        [100, 100],
        [300],  # over the budget on its own: still encoded
        [4],
    ]
    assert _batches([], rows=3, tokens=256) == []


def test_token_budget_leaves_vectors_unchanged(tiny_model: Path) -> None:
    enc = Encoder(tiny_model / "model.onnx", tiny_model / "tokenizer.json")
    texts = [*TEXTS, " ".join(TEXTS * 3)]
    wide = enc.encode(texts, batch_size=64, batch_tokens=10_000)
    narrow = enc.encode(texts, batch_size=64, batch_tokens=8)
    np.testing.assert_allclose(wide, narrow, atol=1e-6)


def test_dimension_check(tiny_model: Path) -> None:
    enc = Encoder(tiny_model / "model.onnx", tiny_model / "tokenizer.json")
    assert enc.dimension == 8
    enc.check_dimension(8, source="x")
    with pytest.raises(ModelError, match="384-dim") as info:
        enc.check_dimension(384, source="obra/superpowers/intents.json")
    assert info.value.exit_code == EXIT_INTEGRITY


def test_model_without_required_inputs_is_refused(tmp_path: Path) -> None:
    build_onnx(tmp_path / "model.onnx", input_names=("ids", "mask", "segments"))
    build_tokenizer(tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match="input_ids"):
        Encoder(tmp_path / "model.onnx", tmp_path / "tokenizer.json").encode_one("fix")


def test_pooled_output_model_is_refused(tmp_path: Path) -> None:
    build_onnx(tmp_path / "model.onnx", rank=2)
    build_tokenizer(tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match=r"\[batch, tokens, dim\]"):
        _ = Encoder(tmp_path / "model.onnx", tmp_path / "tokenizer.json").dimension


def test_corrupt_model_and_tokenizer_are_clear_errors(tiny_model: Path, tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes((tiny_model / "model.onnx").read_bytes()[:100])
    with pytest.raises(ModelError, match="cannot load ONNX model"):
        Encoder(tmp_path / "model.onnx", tiny_model / "tokenizer.json").encode_one("fix")
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(ModelError, match="cannot load tokenizer"):
        Encoder(tiny_model / "model.onnx", tmp_path / "tokenizer.json").encode_one("fix")


def test_lone_surrogates_are_replaced_not_raised(tiny_model: Path) -> None:
    # A JSON "\ud800" escape (MCP query, package.json description) or an undecodable argv
    # byte (surrogateescape) is a lone surrogate: the Rust tokenizer raised TypeError on it,
    # failing a hybrid search or a whole index build. It now reads as U+FFFD.
    enc = Encoder(tiny_model / "model.onnx", tiny_model / "tokenizer.json")
    for bad, clean in (("debug \ud800 tests", "debug \ufffd tests"), ("\udcff", "\ufffd")):
        np.testing.assert_allclose(enc.encode_one(bad), enc.encode_one(clean), atol=1e-6)
        np.testing.assert_allclose(enc.encode([bad, "fix"])[0], enc.encode_one(clean), atol=1e-6)
    assert valid_text("a \ud83d\ude00 pair") == "a \U0001f600 pair"  # a real pair survives
    assert valid_text("plain é") == "plain é"
