"""The encoder rewritten once so that ONNX Runtime keeps int8 weights int8.

The published int8 all-MiniLM-L6-v2 stores each weight as int8 + a float scale, dequantized
in the graph (`Cast` to float, `Mul` by the scale). ONNX Runtime's constant folding turns
every one back into a float32 tensor when the session starts: 23 MB of weights become
~156 MB of session memory (and ~270 MB at its peak). Rewritten here, once per model file:

- a weight feeding `MatMul` with one scale per output column becomes `MatMulNBits`
  (com.microsoft, 8 bits, blocks of 16, the same scale in each block of a column): int8
  weights used in place by int8 kernels (activations quantized per block of 16);
- an embedding table with one scale per row becomes `Gather` of the int8 rows, then
  `Cast` + `Mul` by the gathered scales: only the rows a query uses are dequantized.

The rewritten model must reproduce the original on probe inputs (cosine >= PROBE_COSINE
after mean pooling) or it is not used. It lives in `state/derived/encoder/` keyed by the
model file's stat, the ONNX Runtime version and FORMAT; a model with nothing to rewrite
(e.g. float32) gets a `.none` marker so that nobody tries again. It is made after an install
that has a model (sync.finish), never by a search or a server: the rewrite needs the `onnx`
package and ~300 MB at its peak, so it runs in a child process (`python -m
ontoskills.embeddings.optimize SRC`, which only reads and answers on stdout), which also keeps
a crash in it out of the install; the file is written here, through the home's guarded
writers.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import numpy as np

from ..errors import OntoskillsError
from ..fsutil import atomic_write_bytes, remove_file

FORMAT = 1  # bump when the rewrite changes
BLOCK = 16  # MatMulNBits block: 16 reproduces the original at cosine >= 0.9996 (32: 0.9994)
ACCURACY_LEVEL = 4  # int8 compute: the fp32-activation path (1) is ~4x slower on CPU
PROBE_COSINE = 0.999
NOTHING_TO_DO = 3  # the child's exit code: a marker is written, nobody tries again
TIMEOUT = 600.0
_MS = "com.microsoft"


def _ort_version() -> str:
    try:
        from importlib.metadata import version

        return version("onnxruntime")
    except Exception:  # not installed / unknown: still a stable key
        return "unknown"


def derived_for(model_path: Path, out_dir: Path) -> tuple[Path, Path] | None:
    """(rewritten model, "nothing to rewrite" marker) for this model file, None if absent."""
    try:
        st = os.stat(model_path)
    except OSError:
        return None
    ident = f"{FORMAT}:{_ort_version()}:{model_path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:24]
    return out_dir / f"model-{key}.onnx", out_dir / f"model-{key}.none"


def optimized_model(model_path: Path, out_dir: Path, *, make: bool = False) -> Path | None:
    """The rewritten model for `model_path`; with `make`, made now (in a child process) when
    it was never tried. None when there is none: nothing to rewrite, not made yet, or not
    possible here (no `onnx` package)."""
    paths = derived_for(model_path, out_dir)
    if paths is None:
        return None
    target, marker = paths
    if target.is_file():
        return target
    if not make or marker.exists() or importlib.util.find_spec("onnx") is None:
        return None
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ontoskills.embeddings.optimize", str(model_path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    # The child only reads: what it made comes back on stdout and is written here, through
    # the home's guarded writers (a symlinked folder is refused, never written through).
    if proc.returncode == 0 and proc.stdout:
        atomic_write_bytes(target, proc.stdout)
    elif proc.returncode == NOTHING_TO_DO:
        atomic_write_bytes(marker, proc.stderr[-2000:] or b"nothing to rewrite\n")
    else:
        return None  # crashed or killed: tried again by the next install
    for old in out_dir.glob("model-*"):  # a replaced model's rewrite: never used again
        if old not in (target, marker):
            with contextlib.suppress(OSError):
                remove_file(old)
    return target if target.is_file() else None


def discard(model_path: Path, out_dir: Path) -> None:
    """Forget a rewritten model that ONNX Runtime refused (damaged): mark it unusable."""
    paths = derived_for(model_path, out_dir)
    if paths is None:
        return
    with contextlib.suppress(OSError, OntoskillsError):
        remove_file(paths[0])
        atomic_write_bytes(paths[1], b"refused by onnxruntime\n")


# ----------------------------------------------------------------------------- the rewrite
def rewrite(model: Any) -> int:
    """Rewrite `model` (an onnx.ModelProto) in place; returns how many weights changed."""
    from onnx import helper

    graph = model.graph
    g = _Graph(graph)
    replace: dict[int, list[Any]] = {}  # id(node) -> nodes in its place ([] removes it)
    new_inits: list[Any] = []
    dropped: set[str] = set()
    changed = 0
    for mul in graph.node:
        found = g.dequantized(mul)
        if found is None:
            continue
        cast, q, scale = found
        consumers = g.users.get(mul.output[0], [])
        weight = mul.output[0]
        rows, cols = q.shape
        if (
            all(u.op_type == "MatMul" and list(u.input).index(weight) == 1 for u in consumers)
            and scale.shape == (1, cols)
            and rows % BLOCK == 0
        ):
            new_inits += _packed(weight, q, scale)
            for u in consumers:
                replace[id(u)] = [_matmul_nbits(u, weight, rows, cols)]
            dropped.update((cast.input[0], mul.input[1]))
        elif all(
            u.op_type == "Gather"
            and u.input[0] == weight
            and all(a.name != "axis" or a.i == 0 for a in u.attribute)
            for u in consumers
        ) and scale.shape == (rows, 1):
            for u in consumers:
                replace[id(u)] = _gather_int8(u, cast.input[0], mul.input[1])
        else:
            continue
        replace[id(cast)] = []
        replace[id(mul)] = []
        changed += 1
    if not changed:
        return 0
    nodes = [m for n in graph.node for m in replace.get(id(n), [n])]
    del graph.node[:]
    graph.node.extend(nodes)
    still_used = {name for n in nodes for name in n.input}
    keep = [t for t in graph.initializer if t.name not in dropped or t.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend([*keep, *new_inits])
    if not any(o.domain == _MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(_MS, 1))
    return changed


class _Graph:
    """What the rewrite looks up in a graph: initializers, who produces and who uses a value."""

    def __init__(self, graph: Any) -> None:
        self.inits = {t.name: t for t in graph.initializer}
        self.producer = {out: n for n in graph.node for out in n.output}
        self.users: dict[str, list[Any]] = {}
        for n in graph.node:
            for name in n.input:
                self.users.setdefault(name, []).append(n)
        self.outputs = {o.name for o in graph.output}

    def dequantized(self, mul: Any) -> tuple[Any, np.ndarray, np.ndarray] | None:
        """(cast, int8 weight, float scale) when `mul` is Mul(Cast(int8 init -> float), scale
        init) with a 2-D weight used only there and by someone, neither output a graph output."""
        from onnx import TensorProto, numpy_helper

        if mul.op_type != "Mul" or len(mul.input) != 2 or mul.input[1] not in self.inits:
            return None
        cast = self.producer.get(mul.input[0])
        if (
            cast is None
            or cast.op_type != "Cast"
            or cast.input[0] not in self.inits
            or self.inits[cast.input[0]].data_type != TensorProto.INT8
            or _attr(cast, "to") != TensorProto.FLOAT
            or len(self.users.get(cast.output[0], [])) != 1
            or {cast.output[0], mul.output[0]} & self.outputs
        ):
            return None
        q = numpy_helper.to_array(self.inits[cast.input[0]])
        scale = numpy_helper.to_array(self.inits[mul.input[1]]).astype(np.float32)
        if q.ndim != 2 or not self.users.get(mul.output[0]):
            return None
        return cast, q, scale


def _packed(weight: str, q: np.ndarray, scale: np.ndarray) -> list[Any]:
    """The MatMulNBits initializers of an int8 weight: uint8 blocks, scales, zero points."""
    from onnx import numpy_helper

    rows, cols = q.shape
    blocks = rows // BLOCK
    packed = (q.astype(np.int16) + 128).astype(np.uint8).T.reshape(cols, blocks, BLOCK)
    scales = np.repeat(scale.reshape(cols, 1), blocks, axis=1)
    zero = np.full((cols, blocks), 128, dtype=np.uint8)  # exact: q + 128 - 128
    return [
        numpy_helper.from_array(packed, f"{weight}__q8"),
        numpy_helper.from_array(np.ascontiguousarray(scales), f"{weight}__scale"),
        numpy_helper.from_array(zero, f"{weight}__zero"),
    ]


def _matmul_nbits(u: Any, weight: str, rows: int, cols: int) -> Any:
    from onnx import helper

    return helper.make_node(
        "MatMulNBits",
        [u.input[0], f"{weight}__q8", f"{weight}__scale", f"{weight}__zero"],
        list(u.output),
        name=f"{u.name or weight}__nbits",
        domain=_MS,
        K=rows,
        N=cols,
        bits=8,
        block_size=BLOCK,
        accuracy_level=ACCURACY_LEVEL,
    )


def _gather_int8(u: Any, q_name: str, scale_name: str) -> list[Any]:
    """Gather the int8 rows and their scales, then cast and scale only what was gathered."""
    from onnx import TensorProto, helper

    out, ids = u.output[0], u.input[1]
    return [
        helper.make_node("Gather", [q_name, ids], [f"{out}__q"], axis=0),
        helper.make_node("Cast", [f"{out}__q"], [f"{out}__f"], to=TensorProto.FLOAT),
        helper.make_node("Gather", [scale_name, ids], [f"{out}__s"], axis=0),
        helper.make_node("Mul", [f"{out}__f", f"{out}__s"], [out]),
    ]


def _attr(node: Any, name: str) -> Any:
    from onnx import helper

    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


def _pooled(session: Any, ids: np.ndarray) -> np.ndarray:
    mask = np.ones_like(ids)
    names = [i.name for i in session.get_inputs()]
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feeds)[0].mean(axis=1)
    return hidden / np.clip(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-12, None)


def probe_cosine(original: Path, rewritten: bytes, vocab: int) -> float:
    """Lowest cosine between the two models' pooled outputs on fixed random token ids."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    cpu = ["CPUExecutionProvider"]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, max(1, vocab), size=(8, 24), dtype=np.int64)
    a = _pooled(ort.InferenceSession(str(original), opts, providers=cpu), ids)
    b = _pooled(ort.InferenceSession(rewritten, opts, providers=cpu), ids)
    return float(np.min(np.sum(a * b, axis=1)))


def _vocab(model: Any) -> int:
    """Rows of the table `input_ids` indexes (probe ids must be valid token ids); in the
    rewritten graph that table is an initializer (the int8 rows)."""
    inits = {t.name: t for t in model.graph.initializer}
    rows = [
        int(inits[n.input[0]].dims[0])
        for n in model.graph.node
        if n.op_type == "Gather" and n.input[0] in inits and n.input[1] == "input_ids"
    ]
    return min(rows) if rows else 2


def main(argv: list[str], out: BinaryIO, err: TextIO) -> int:
    """SRC: the rewritten model on `out` (exit 0), or why not on `err` (exit NOTHING_TO_DO):
    nothing to rewrite, or the result does not reproduce SRC. Reads only. `out` and `err` are
    the pipes `optimized_model` reads (this runs as its child), never a user's terminal."""
    import onnx

    model = onnx.load(argv[0])
    if rewrite(model) == 0:
        err.write("nothing to rewrite\n")
        return NOTHING_TO_DO
    data = model.SerializeToString()
    try:
        cos = probe_cosine(Path(argv[0]), data, _vocab(model))
    except Exception as exc:  # e.g. an onnxruntime without 8-bit MatMulNBits
        err.write(f"onnxruntime refused it: {exc}\n")
        return NOTHING_TO_DO
    if not cos >= PROBE_COSINE:
        err.write(f"probe cosine {cos:.6f} < {PROBE_COSINE}\n")
        return NOTHING_TO_DO
    out.write(data)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], sys.stdout.buffer, sys.stderr))
