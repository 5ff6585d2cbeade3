"""Sentence encoder: ONNX Runtime + `tokenizers`, mean (or CLS) pooling, L2 normalisation.

What differs between sentence encoders is configuration, not code (`[embeddings]` in
config.toml, docs/EMBEDDINGS.md "Another encoder"): the pooling (`mean` for MiniLM, `cls` for
bge), the prefixes put before queries and before passages (e5: "query: " / "passage: "),
the tokens read per text, and the dimension the vectors must have.

The one place vectors are computed, used by search, the server and export-embeddings.
Single queries run unpadded (the published tokenizer pads to 128 tokens, ~5x slower for the
same vector); batches are padded to their longest member only.

Memory (docs/PERFORMANCE.md): given `optimized_dir` (the home's encoders do), the session
runs the model optimize.py rewrote after install, when there is one: its int8 weights stay
int8 (~50 MB of session instead of ~156 MB, as fast, vectors at cosine >= 0.999 of the
original's). ONNX
Runtime's memory arena and memory patterns are off: a query server runs one short input at
a time, where they only keep freed buffers around (~3-10 MB) without making it faster.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import envvars
from ..config import EMBEDDING_POOLINGS
from ..errors import IntegrityError
from ..query import valid_text

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Padded tokens per ONNX run. A run's transient memory grows with rows x width (every
# layer's activations and attention scores): the 626 descriptions of the full registry
# (up to 128 tokens) in batches of 64 peaked +455 MB over the session, 4 rows (512 tokens)
# +82 MB, in the same time (long texts gain nothing from batching on CPU); short intents
# still run 32 at a time, where batching does pay (~2x over one at a time).
BATCH_TOKENS = 512
POOLINGS = EMBEDDING_POOLINGS
_REQUIRED_INPUTS = {"input_ids", "attention_mask"}


class ModelError(IntegrityError):
    """The model or tokenizer is corrupt, incompatible or of the wrong dimension."""


class Encoder:
    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        model_name: str = DEFAULT_MODEL,
        threads: int | None = None,
        max_length: int = 128,
        optimized_dir: Path | None = None,
        pooling: str = "mean",
        query_prefix: str = "",
        passage_prefix: str = "",
        dimension: int | None = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise ModelError(f"unknown pooling {pooling!r}: one of {', '.join(POOLINGS)}")
        self.model_path = Path(model_path)
        self.optimized_dir = optimized_dir
        self.tokenizer_path = Path(tokenizer_path)
        self.model_name = model_name
        self.threads = threads or envvars.get_int(envvars.ENCODER_THREADS)
        self.max_length = max_length
        self.pooling = pooling
        # encode_one() reads a query, encode() passages (intents, descriptions)
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.expected_dimension = dimension  # configured: a model of another size is refused
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: list[str] = []
        self._dimension: int | None = None

    def reads_published_vectors(self, model: str | None, own: str | None = None) -> bool:
        """Whether vectors a registry publishes (intents.json) or `install --with-embeddings`
        derived, made by `model` with the default settings (mean pooling, no prefixes, 128
        tokens), lie in this encoder's space (`own`: this encoder's model id when the
        caller knows it better, e.g. from the lock). When not, the catalog derives every
        vector with this encoder instead (catalog/builder.py), cached per model identity."""
        default = (
            self.pooling == "mean"
            and not self.query_prefix
            and not self.passage_prefix
            and self.max_length == 128
        )
        return default and (model is None or model == (own or self.model_name))

    # lazy loading -------------------------------------------------------------------
    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(self.tokenizer_path))
            except Exception as exc:
                raise ModelError(f"cannot load tokenizer {self.tokenizer_path}: {exc}") from None
            tok.enable_truncation(max_length=self.max_length)
            tok.no_padding()
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            opts.enable_cpu_mem_arena = False
            opts.enable_mem_pattern = False
            session = self._session_for(ort, opts)
            names = [i.name for i in session.get_inputs()]
            if not _REQUIRED_INPUTS.issubset(names):
                raise ModelError(
                    f"{self.model_path}: model inputs {names} lack input_ids/attention_mask"
                )
            out = session.get_outputs()[0]
            if len(out.shape) != 3:
                raise ModelError(
                    f"{self.model_path}: expected a [batch, tokens, dim] output, got {out.shape}"
                )
            dim = out.shape[2]
            self._dimension = dim if isinstance(dim, int) else None
            if self.expected_dimension is not None and self._dimension not in (
                None,
                self.expected_dimension,
            ):
                raise ModelError(
                    f"{self.model_path}: the model makes {self._dimension}-dim vectors, "
                    f"[embeddings] dimension says {self.expected_dimension}",
                    hint="set [embeddings] dimension to the model's, or install that model",
                )
            self._input_names = names
            self._tokenizer = tok
            self._session = session

    def _session_for(self, ort: Any, opts: Any) -> Any:
        """A session of the rewritten model when there is one (a damaged one is forgotten
        and the original used), else of the model itself."""
        cpu = ["CPUExecutionProvider"]
        if self.optimized_dir is not None:
            from .optimize import discard, optimized_model

            rewritten = optimized_model(self.model_path, self.optimized_dir)
            if rewritten is not None:
                try:
                    return ort.InferenceSession(str(rewritten), sess_options=opts, providers=cpu)
                except Exception:
                    discard(self.model_path, self.optimized_dir)
        try:
            return ort.InferenceSession(str(self.model_path), sess_options=opts, providers=cpu)
        except Exception as exc:
            raise ModelError(
                f"cannot load ONNX model {self.model_path}: {str(exc).splitlines()[0]}",
                hint="re-run `ontoskills install --with-embeddings` to fetch a fresh copy",
            ) from None

    @property
    def dimension(self) -> int:
        self._load()
        if self._dimension is None:  # symbolic output dim: measure it once
            self._dimension = int(self.encode_one("dimension probe").shape[0])
            if self.expected_dimension not in (None, self._dimension):
                raise ModelError(
                    f"{self.model_path}: the model makes {self._dimension}-dim vectors, "
                    f"[embeddings] dimension says {self.expected_dimension}",
                    hint="set [embeddings] dimension to the model's, or install that model",
                )
        return self._dimension

    def check_dimension(self, expected: int, *, source: str) -> None:
        if self.dimension != expected:
            raise ModelError(
                f"{source} holds {expected}-dim vectors but the model produces {self.dimension}",
                hint="install the model the vectors were made with (see `ontoskills doctor`)",
            )

    # encoding -----------------------------------------------------------------------
    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        if self.pooling == "cls":  # the first token's state (bge); padding is at the end
            pooled = hidden[:, 0, :].astype(np.float32)
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        """One query (with the query prefix)."""
        self._load()
        enc = self._tokenizer.encode(self.query_prefix + valid_text(text))
        ids = np.asarray([enc.ids], dtype=np.int64)
        mask = np.asarray([enc.attention_mask], dtype=np.int64)
        return self._run(ids, mask)[0]

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 64, batch_tokens: int = BATCH_TOKENS
    ) -> np.ndarray:
        """Encode many passages (with the passage prefix); each batch is padded only to its
        longest member and holds at most `batch_size` texts and `batch_tokens` padded tokens
        (BATCH_TOKENS says why)."""
        self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = []
        encs = self._tokenizer.encode_batch([self.passage_prefix + valid_text(t) for t in texts])
        for batch in _batches(encs, batch_size, batch_tokens):
            width = max(len(e.ids) for e in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, e in enumerate(batch):
                ids[row, : len(e.ids)] = e.ids
                mask[row, : len(e.ids)] = e.attention_mask
            out.append(self._run(ids, mask))
        return np.concatenate(out, axis=0)


def _batches(encs: Sequence[Any], rows: int, tokens: int) -> list[list[Any]]:
    """Consecutive groups of at most `rows` encodings whose padded size (rows x longest)
    stays within `tokens`; a text longer than `tokens` runs alone."""
    out: list[list[Any]] = []
    batch: list[Any] = []
    width = 0
    for enc in encs:
        wider = max(width, len(enc.ids))
        if batch and (len(batch) >= rows or wider * (len(batch) + 1) > tokens):
            out.append(batch)
            batch, wider = [], len(enc.ids)
        batch.append(enc)
        width = wider
    if batch:
        out.append(batch)
    return out
