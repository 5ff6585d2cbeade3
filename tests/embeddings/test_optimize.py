"""The encoder rewritten for serving (embeddings/optimize.py): int8 weights kept int8, the same
vectors, made once, damaged or float models handled."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from ontoskills.embeddings import optimize
from ontoskills.embeddings.encoder import Encoder
from ontoskills.paths import Home
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.tinymodel import build_quantized_onnx, build_tokenizer

TEXTS = ["debug failing tests", "write a plan", "review code before merge", "fix", "add color"]


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("int8-model")
    build_quantized_onnx(folder / "model.onnx")
    build_tokenizer(folder / "tokenizer.json")
    return folder


def _ops(path: Path) -> list[str]:
    return [n.op_type for n in onnx.load(str(path)).graph.node]


def test_rewritten_model_reproduces_the_original(int8_model: Path, tmp_path: Path) -> None:
    original = Encoder(int8_model / "model.onnx", int8_model / "tokenizer.json")
    assert optimize.optimized_model(int8_model / "model.onnx", tmp_path) is None  # not made
    assert optimize.optimized_model(int8_model / "model.onnx", tmp_path, make=True)
    served = Encoder(
        int8_model / "model.onnx", int8_model / "tokenizer.json", optimized_dir=tmp_path
    )
    want = original.encode(TEXTS)
    got = served.encode(TEXTS)
    assert float(np.min(np.sum(want * got, axis=1))) >= 0.999
    one = np.stack([served.encode_one(t) for t in TEXTS])
    assert float(np.min(np.sum(want * one, axis=1))) >= 0.999
    (made,) = tmp_path.glob("model-*.onnx")
    ops = _ops(made)
    # The MatMul weight is used as int8 by MatMulNBits; the table is gathered as int8 rows.
    assert "MatMulNBits" in ops and "MatMul" not in ops
    graph = onnx.load(str(made)).graph
    int8 = {t.name for t in graph.initializer if t.data_type == onnx.TensorProto.INT8}
    assert int8 == {"table_q"}
    assert all(n.input[0] not in int8 for n in graph.node if n.op_type == "Cast")


def test_made_once_then_reused(
    int8_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = int8_model / "model.onnx"
    first = optimize.optimized_model(model, tmp_path, make=True)
    assert first is not None and first.is_file()

    def no_child(*args: object, **kw: object) -> None:
        raise AssertionError("the rewrite ran again")

    monkeypatch.setattr(subprocess, "run", no_child)
    assert optimize.optimized_model(model, tmp_path, make=True) == first


def test_float_model_is_marked_and_not_retried(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tiny_model / "model.onnx"
    assert optimize.optimized_model(model, tmp_path, make=True) is None
    assert list(tmp_path.glob("model-*.onnx")) == []
    (marker,) = tmp_path.glob("model-*.none")
    assert b"nothing to rewrite" in marker.read_bytes()

    def no_child(*args: object, **kw: object) -> None:
        raise AssertionError("the rewrite ran again")

    monkeypatch.setattr(subprocess, "run", no_child)
    enc = Encoder(model, tiny_model / "tokenizer.json", optimized_dir=tmp_path)
    assert enc.encode_one("debug failing tests").shape == (8,)


def test_damaged_rewrite_falls_back_to_the_original(int8_model: Path, tmp_path: Path) -> None:
    model = int8_model / "model.onnx"
    paths = optimize.derived_for(model, tmp_path)
    assert paths is not None
    target, marker = paths
    tmp_path.mkdir(exist_ok=True)
    target.write_bytes(b"not an onnx model")
    served = Encoder(model, int8_model / "tokenizer.json", optimized_dir=tmp_path)
    original = Encoder(model, int8_model / "tokenizer.json")
    np.testing.assert_allclose(served.encode(TEXTS), original.encode(TEXTS), atol=1e-6)
    assert not target.exists() and marker.is_file()  # forgotten, never tried again


def test_a_changed_model_gets_its_own_rewrite(int8_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    build_quantized_onnx(folder / "model.onnx", seed=1)
    first = optimize.optimized_model(folder / "model.onnx", tmp_path / "out", make=True)
    build_quantized_onnx(folder / "model.onnx", seed=2)  # replaced: new stat
    second = optimize.optimized_model(folder / "model.onnx", tmp_path / "out", make=True)
    assert first is not None and second is not None and first != second
    assert second.is_file() and not first.exists()  # the old one is gone


def test_install_prepares_the_rewrite_and_search_uses_it(
    cli: CliRunner, int8_model: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    skills = [SkillSpec("debugging", intents=("debug failing tests", "find root cause"))]
    registry = build_registry(
        tmp_path / "reg", [PackageSpec(id="acme/devtools", dimension=32, skills=skills)]
    )
    proc = cli(
        "--registry",
        str(registry),
        "install",
        "acme/devtools",
        "--model",
        str(int8_model),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    (made,) = (home.derived_dir / "encoder").glob("model-*.onnx")
    stamp = made.stat().st_mtime_ns
    found = cli("search", "debug failing tests", "--mode", "hybrid", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["skill"] == "acme/devtools/debugging"
    assert made.stat().st_mtime_ns == stamp  # used, not remade
