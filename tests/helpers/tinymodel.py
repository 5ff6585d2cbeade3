"""A tiny sentence encoder for fast tests: a real ONNX graph + a real WordPiece tokenizer.

The graph looks up a fixed random embedding per token (plus a token-type embedding) and
returns it as `last_hidden_state` [batch, tokens, dim], like a BERT export; the encoder's
pooling and normalisation then run for real through onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = [
    "add",
    "a",
    "an",
    "and",
    "before",
    "branch",
    "bug",
    "build",
    "check",
    "code",
    "color",
    "commit",
    "create",
    "debug",
    "design",
    "document",
    "failing",
    "find",
    "fix",
    "for",
    "git",
    "implementation",
    "merge",
    "of",
    "plan",
    "review",
    "root",
    "cause",
    "run",
    "search",
    "skill",
    "test",
    "tests",
    "the",
    "to",
    "ui",
    "write",
]


def vocab() -> dict[str, int]:
    return {tok: i for i, tok in enumerate(SPECIAL + WORDS)}


def build_tokenizer(path: Path, *, pad_to: int | None = 16) -> Path:
    tok = Tokenizer(models.WordPiece(vocab(), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    if pad_to:  # like the published tokenizer (pads to 128): the encoder must undo it
        tok.enable_padding(pad_id=0, pad_token="[PAD]", length=pad_to)
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return path


def build_onnx(
    path: Path,
    *,
    dim: int = 8,
    seed: int = 0,
    input_names: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
    rank: int = 3,
) -> Path:
    rng = np.random.default_rng(seed)
    n = len(SPECIAL) + len(WORDS)
    table = numpy_helper.from_array(rng.normal(size=(n, dim)).astype(np.float32), "table")
    types = numpy_helper.from_array(rng.normal(size=(2, dim)).astype(np.float32) * 0.1, "types")
    ids, _mask, tt = input_names[0], input_names[1], input_names[-1]
    nodes = [
        helper.make_node("Gather", ["table", ids], ["tok"], axis=0),
        helper.make_node("Gather", ["types", tt], ["typ"], axis=0),
        helper.make_node("Add", ["tok", "typ"], ["hidden3"]),
    ]
    out_name = "last_hidden_state"
    if rank == 3:
        nodes[-1].output[0] = out_name
        out_shape: list[object] = ["batch", "tokens", dim]
    else:  # a pooled [batch, dim] output: not what the encoder expects
        nodes.append(helper.make_node("ReduceMean", ["hidden3"], [out_name], axes=[1], keepdims=0))
        out_shape = ["batch", dim]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in input_names
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-encoder",
        inputs,
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)],
        initializer=[table, types],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def build_quantized_onnx(path: Path, *, dim: int = 32, seed: int = 0) -> Path:
    """Weight-only int8, as the published all-MiniLM-L6-v2 export: each weight is int8 + a
    float scale dequantized in the graph (Cast, Mul): a token table (one scale per row) and
    a projection with a bias (one scale per output column), then tanh."""
    rng = np.random.default_rng(seed)
    n = len(SPECIAL) + len(WORDS)

    def quantize(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
        scale = np.abs(w).max(axis=axis, keepdims=True) / 127.0
        return np.round(w / scale).astype(np.int8), scale.astype(np.float32)

    table_q, table_s = quantize(rng.normal(size=(n, dim)).astype(np.float32), 1)
    proj_q, proj_s = quantize(rng.normal(size=(dim, dim)).astype(np.float32) / dim**0.5, 0)
    inits = [
        numpy_helper.from_array(table_q, "table_q"),
        numpy_helper.from_array(table_s, "table_scale"),
        numpy_helper.from_array(proj_q, "proj_q"),
        numpy_helper.from_array(proj_s, "proj_scale"),
        numpy_helper.from_array(rng.normal(size=dim).astype(np.float32) * 0.1, "bias"),
    ]
    nodes = [
        helper.make_node("Cast", ["table_q"], ["table_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["table_f", "table_scale"], ["table"]),
        helper.make_node("Cast", ["proj_q"], ["proj_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["proj_f", "proj_scale"], ["proj"]),
        helper.make_node("Gather", ["table", "input_ids"], ["tok"], axis=0),
        helper.make_node("MatMul", ["tok", "proj"], ["mm"]),
        helper.make_node("Add", ["mm", "bias"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["last_hidden_state"]),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", dim]
    )
    graph = helper.make_graph(nodes, "tiny-int8-encoder", inputs, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def build_tiny_model(folder: Path, *, dim: int = 8, seed: int = 0) -> Path:
    """folder/model.onnx + folder/tokenizer.json; returns folder."""
    build_onnx(folder / "model.onnx", dim=dim, seed=seed)
    build_tokenizer(folder / "tokenizer.json")
    return folder
