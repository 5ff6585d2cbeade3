"""Soft term matching (issue 26): query words -> the catalog words the encoder puts near them.

A paraphrase shares no word with its skill ("rent a graphics card" for modal-gpu), so BM25
gives it nothing and hybrid search leans on one vector per intent. This stage gives BM25
evidence of its own: every word of the catalog's vocabulary (skill names, descriptions,
intents; one surface form per stem) is encoded once with the configured encoder and cached
per model identity and vocabulary (`state/derived/word-vectors/`); at query time each content
word of the query is compared with the whole vocabulary (one matrix product), and its nearest
catalog words above `FLOOR` become extra BM25 terms weighted `ALPHA x cosine` (the query's own
terms keep weight 1). What the extra terms add to a skill is capped at `CAP` of the best
exact BM25 score, so a skill matching the query's own words is never outranked by one that
only matches neighbours. Confidence evidence (coverage, unknown words) still reads the
query's own terms only: a neighbour is a hint for ranking, not proof the catalog knows it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import jsonio
from ..fsutil import atomic_write_bytes, remove_file
from .bm25 import BM25Index
from .tokenize import STOP_WORDS, stem, words

if TYPE_CHECKING:
    from ..catalog.model import SkillRecord
    from ..embeddings.encoder import Encoder

FLOOR = 0.5  # cosine below which a catalog word is not a neighbour (dev sets: 0.45-0.5 best)
ALPHA = 0.5  # a neighbour's BM25 weight per unit of cosine (the query's own terms: 1)
CAP = 0.5  # the extra terms add at most this share of the best exact BM25 score
PER_WORD = 3  # neighbours kept per query word
MAX_QUERY_WORDS = 24  # a 10,000-word query costs what its first 24 content words cost
MAX_TEXT = 4096  # characters of a query read for its words (a 4 MiB query: its start)
MIN_LEN = 3  # shorter words ("js", "ui") are ids and acronyms: their vectors are noise
MAX_LEN = 24
MAX_SEEN = 8192  # query-word vectors remembered (x 384 floats: ~12 MB at most)
CHUNK_ROWS = 1024  # rows per matrix product (semantic.py: keeps BLAS single-threaded)
WORDS_DIR = "word-vectors"  # under state/derived/
Encode = Callable[[Sequence[str]], np.ndarray]


def content_words(texts: Iterable[str]) -> list[str]:
    """Alphabetic words of MIN_LEN..MAX_LEN letters, stop words out, in order of first use."""
    out: dict[str, None] = {}
    for text in texts:
        for w in words(text):
            if MIN_LEN <= len(w) <= MAX_LEN and w.isalpha() and w not in STOP_WORDS:
                out.setdefault(w, None)
    return list(out)


def vocabulary(texts: Iterable[str], known: Callable[[str], bool]) -> list[str]:
    """One surface word per stem (its most frequent form), for stems BM25 indexes; sorted,
    so the same catalog gives the same vocabulary (and cache key) in any order."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(content_words([text]))
    best: dict[str, str] = {}
    for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        s = stem(w)
        if s not in best and known(s):
            best[s] = w
    return sorted(best.values())


def catalog_words(
    records: Sequence[SkillRecord], bm25: BM25Index, folder: Path, identity: str, encoder: Encoder
) -> WordVectors:
    """The vectors of a catalog's vocabulary (names, descriptions, intents), cached in
    `folder` for the model `identity` (catalog/live.py's signature: a new model, pooling or
    prefix is a new identity)."""
    texts = (t for r in records for t in (r.name, r.description, *r.intents))
    vocab = vocabulary(texts, lambda term: term in bm25.terms)
    return WordVectors.load(folder, identity, vocab, encoder.encode)


class WordVectors:
    """The vocabulary's unit vectors (one row per word) and each word's BM25 term."""

    def __init__(self, vocab: list[str], matrix: np.ndarray) -> None:
        self.words = vocab
        self.stems = [stem(w) for w in vocab]
        self.row = {w: i for i, w in enumerate(vocab)}
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._seen: dict[str, np.ndarray] = {}  # query words outside the vocabulary

    @classmethod
    def load(cls, folder: Path, identity: str, vocab: list[str], encode: Encode) -> WordVectors:
        """From the cache when it holds this model's vectors of these words; words it lacks
        are encoded (and the cache rewritten with exactly this vocabulary)."""
        key = hashlib.sha256(identity.encode()).hexdigest()[:24]
        meta_path, vec_path = folder / f"{key}.json", folder / f"{key}.npy"
        old: dict[str, np.ndarray] = {}
        with contextlib.suppress(OSError, ValueError, TypeError):
            cached = jsonio.loads_derived(meta_path.read_bytes())
            matrix = np.load(vec_path, allow_pickle=False)
            if isinstance(cached, list) and matrix.ndim == 2 and matrix.shape[0] == len(cached):
                old = {str(w): matrix[i] for i, w in enumerate(cached)}
        missing = [w for w in vocab if w not in old]
        if missing:
            fresh = np.asarray(encode(missing), dtype=np.float32)
            old.update(zip(missing, fresh, strict=True))
        dim = next(iter(old.values())).shape[0] if old else 0
        matrix = np.stack([old[w] for w in vocab]) if vocab else np.zeros((0, dim), np.float32)
        if missing or len(old) != len(vocab):
            _save(folder, meta_path, vec_path, vocab, matrix)
        return cls(vocab, matrix)

    def vectors(self, query_words: list[str], encode: Encode) -> np.ndarray:
        """Vectors of the query's words: the vocabulary's row, else one encode of the words
        not seen before (remembered: an agent's queries repeat their words)."""
        seen = self._seen
        todo = [w for w in query_words if w not in self.row and w not in seen]
        if todo:
            if len(seen) + len(todo) > MAX_SEEN:
                seen.clear()  # a bound, not an LRU: refilled by the next queries
            seen.update(zip(todo, np.asarray(encode(todo), dtype=np.float32), strict=True))
        return np.stack(
            [self.matrix[self.row[w]] if w in self.row else seen[w] for w in query_words]
        ).astype(np.float32)

    def neighbours(self, text: str, encode: Encode) -> dict[str, float]:
        """BM25 term -> weight for the catalog words near the query's words (its own terms
        excluded: they already count with weight 1)."""
        qwords = content_words([text[:MAX_TEXT]])[:MAX_QUERY_WORDS]
        if not qwords or not len(self.words):
            return {}
        own = {stem(w) for w in qwords}
        q = self.vectors(qwords, encode)
        # Matrix-VECTOR products over row chunks: a matrix-matrix product (all the query's
        # words at once) goes to OpenBLAS's thread pool, whose threads spin against a busy
        # CPU (55 ms instead of ~2 ms a query at load 8 on 2 cores; semantic.py likewise).
        sims = np.empty((len(qwords), len(self.words)), dtype=np.float32)
        for col in range(len(qwords)):
            for start in range(0, len(self.words), CHUNK_ROWS):
                stop = start + CHUNK_ROWS
                np.matmul(self.matrix[start:stop], q[col], out=sims[col, start:stop])
        sims = sims.T
        out: dict[str, float] = {}
        take = min(len(self.words), PER_WORD + len(own))  # enough after the own stems drop
        best = np.argpartition(-sims, take - 1, axis=0)[:take] if take < len(sims) else None
        for col in range(len(qwords)):
            rows = best[:, col] if best is not None else np.arange(len(sims))
            rows = rows[np.argsort(-sims[rows, col], kind="stable")]
            kept = 0
            for r in rows.tolist():
                sim = float(sims[r, col])
                if sim < FLOOR or kept == PER_WORD:
                    break
                term = self.stems[r]
                if term in own:
                    continue
                out[term] = max(out.get(term, 0.0), ALPHA * sim)
                kept += 1
        return out


def expanded_scores(bm25: BM25Index, exact: np.ndarray, extra: dict[str, float]) -> np.ndarray:
    """BM25 with the neighbour terms added, their share capped at CAP of the best exact."""
    if not extra:
        return exact
    added = np.zeros_like(exact)
    for term, weight in extra.items():
        added += bm25.scores([term]) * np.float32(weight)
    top = float(exact.max()) if len(exact) else 0.0
    if top > 0:
        added = np.minimum(added, np.float32(CAP * top))
    return (exact + added).astype(np.float32)


def _save(folder: Path, meta: Path, vec: Path, vocab: list[str], matrix: np.ndarray) -> None:
    """Derived data: a failed write costs a re-encode next time, never an error. One file
    pair per folder (the current model's): another model's words are of no use."""
    buf = io.BytesIO()
    np.save(buf, matrix, allow_pickle=False)
    with contextlib.suppress(OSError):
        atomic_write_bytes(vec, buf.getvalue())
        atomic_write_bytes(meta, json.dumps(vocab).encode())
        for old in folder.iterdir():
            if old not in (meta, vec):
                with contextlib.suppress(OSError):
                    remove_file(old)
