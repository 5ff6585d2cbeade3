"""Soft term matching (search/expand.py, issue 26), run through a real ONNX encoder (the tiny
synthetic model, tests/helpers/tinymodel.py) and the real BM25 index: neighbours are the
vocabulary words the encoder puts nearest, an exact match is never outranked by neighbours
only, the cache follows the model and the vocabulary, and hostile queries stay bounded."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ontoskills.embeddings.encoder import Encoder
from ontoskills.paths import Home
from ontoskills.search import expand
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.expand import WordVectors, expanded_scores, vocabulary
from ontoskills.search.tokenize import stem, tokenize
from tests.conftest import CliRunner, shared_path
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import service
from tests.helpers.tinymodel import build_tiny_model

CATALOG = [  # (name, description): words the tiny model's tokenizer knows
    ("debugging", "debug failing tests and find the root cause"),
    ("planning", "write a plan before the implementation"),
    ("styling", "design color for the ui"),
    ("committing", "git commit and merge a branch"),
]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Encoder:
    folder = build_tiny_model(tmp_path_factory.mktemp("tiny"), dim=16)
    return Encoder(folder / "model.onnx", folder / "tokenizer.json")


@pytest.fixture
def bm25() -> BM25Index:
    return BM25Index([tokenize(f"{n} {d}") for n, d in CATALOG])


class Counting:
    """The encoder's own encode, counting the texts it was asked for."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder, self.texts = encoder, list[str]()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return self.encoder.encode(list(texts))


def words_of(bm25: BM25Index, folder: Path, encoder: Encoder, identity: str = "m1") -> WordVectors:
    vocab = vocabulary([f"{n} {d}" for n, d in CATALOG], lambda t: t in bm25.terms)
    return WordVectors.load(folder, identity, vocab, encoder.encode)


def test_neighbours_are_the_nearest_vocabulary_words(
    bm25: BM25Index, encoder: Encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wv = words_of(bm25, tmp_path, encoder)
    assert "debug" in wv.words and "debugging" not in wv.words  # one surface form per stem
    query = encoder.encode(["bug"])[0]  # "bug" is no catalog word
    cos = {w: float(wv.matrix[i] @ query) for i, w in enumerate(wv.words)}
    ranked = sorted(cos, key=lambda w: -cos[w])
    # a floor between the 2nd and 3rd nearest: exactly the two nearest are neighbours
    monkeypatch.setattr(expand, "FLOOR", (cos[ranked[1]] + cos[ranked[2]]) / 2)
    got = wv.neighbours("fix the bug", encoder.encode)
    assert stem(ranked[0]) in got and stem(ranked[1]) in got
    assert stem(ranked[2]) not in got
    assert got[stem(ranked[0])] == pytest.approx(expand.ALPHA * cos[ranked[0]], abs=1e-5)
    # a query word's own stem is never its own neighbour (it already counts with weight 1)
    assert "debug" not in wv.neighbours("debugging", encoder.encode)
    monkeypatch.setattr(expand, "FLOOR", 1.01)
    assert wv.neighbours("fix the bug", encoder.encode) == {}


def test_an_exact_match_is_never_outranked_by_neighbours(bm25: BM25Index) -> None:
    exact = bm25.scores(["design"])
    assert int(np.argmax(exact)) == 2 and float(exact[0]) == 0.0
    # however strongly weighted, neighbours add at most CAP of the best exact score
    extra = {"debug": 50.0, "test": 50.0, "root": 50.0}
    got = expanded_scores(bm25, exact, extra)
    assert int(np.argmax(got)) == 2
    assert float(got[0]) == pytest.approx(expand.CAP * float(exact[2]), rel=1e-5)
    # with no exact evidence at all, the neighbours are the evidence
    none = np.zeros_like(exact)
    alone = expanded_scores(bm25, none, {"merg": 0.4})
    assert int(np.argmax(alone)) == 3 and float(alone[3]) > 0
    assert expanded_scores(bm25, exact, {}) is exact


def test_the_cache_follows_the_model_and_the_vocabulary(
    bm25: BM25Index, encoder: Encoder, tmp_path: Path
) -> None:
    vocab = vocabulary([f"{n} {d}" for n, d in CATALOG], lambda t: t in bm25.terms)
    first = Counting(encoder)
    a = WordVectors.load(tmp_path, "model-a", vocab, first)
    assert sorted(first.texts) == sorted(vocab) and len(list(tmp_path.iterdir())) == 2
    again = Counting(encoder)
    b = WordVectors.load(tmp_path, "model-a", vocab, again)
    assert again.texts == [] and np.array_equal(a.matrix, b.matrix)
    # a changed vocabulary: only the new word is encoded, the dropped one leaves the cache
    grown = Counting(encoder)
    c = WordVectors.load(tmp_path, "model-a", [*vocab[1:], "search"], grown)
    assert grown.texts == ["search"] and vocab[0] not in c.words
    reread = Counting(encoder)
    WordVectors.load(tmp_path, "model-a", [*vocab[1:], "search"], reread)
    assert reread.texts == []
    # another model (or pooling, prefix: another identity): every word again, old files gone
    other = Counting(encoder)
    WordVectors.load(tmp_path, "model-b", vocab, other)
    assert sorted(other.texts) == sorted(vocab) and len(list(tmp_path.iterdir())) == 2
    # a damaged cache is re-encoded, never an error
    for f in tmp_path.iterdir():
        f.write_bytes(b"\x93NUMPY garbage")
    broken = Counting(encoder)
    WordVectors.load(tmp_path, "model-b", vocab, broken)
    assert sorted(broken.texts) == sorted(vocab)


def _every_category() -> str:
    rng = random.Random(7)
    chars = [chr(c) for c in range(0x20, 0x3000) if not 0xD800 <= c < 0xE000]
    return "".join(rng.choice(chars) for _ in range(20_000))


@pytest.mark.parametrize(
    "query",
    [
        "debug " * (4 * 1024 * 1024 // 6),  # 4 MiB
        " ".join(f"word{i} planning{i}x" for i in range(5_000)),  # 10,000 words
        _every_category(),
        "\u200b\u0301\ufeff" * 1000,  # zero-width, combining, BOM: no words at all
        "",
    ],
    ids=["4MiB", "10k-words", "every-category", "no-words", "empty"],
)
def test_hostile_queries_are_bounded(
    query: str, bm25: BM25Index, encoder: Encoder, tmp_path: Path
) -> None:
    wv = words_of(bm25, tmp_path, encoder)
    asked = Counting(encoder)
    got = wv.neighbours(query, asked)
    assert len(asked.texts) <= expand.MAX_QUERY_WORDS
    assert len(got) <= expand.PER_WORD * expand.MAX_QUERY_WORDS
    assert all(0 < w <= expand.ALPHA * 1.0001 for w in got.values())
    scores = expanded_scores(bm25, bm25.scores(tokenize(query[:4096])), got)
    assert scores.shape == (len(CATALOG),) and bool(np.all(np.isfinite(scores)))


def test_no_vocabulary_no_neighbours(encoder: Encoder, tmp_path: Path) -> None:
    empty = WordVectors.load(tmp_path, "m", [], encoder.encode)
    assert empty.neighbours("debug failing tests", encoder.encode) == {}
    assert sys.getsizeof(empty.matrix) < 4096


def test_install_with_a_model_encodes_the_vocabulary_once(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """The real encoder (skips without ../shared): `install` leaves the word vectors ready
    (commands/_mutation.warm_search_index), and hybrid searches read them, never re-encode."""
    skills = [
        SkillSpec(
            "debugging", intents=("debug failing tests", "find the root cause"), vectors=False
        ),
        SkillSpec("planning", intents=("write an implementation plan",), vectors=False),
    ]
    registry = build_registry(tmp_path / "reg", [PackageSpec(id="acme/devtools", skills=skills)])
    model = shared_path("models", "model.onnx").parent
    cli_inproc(
        "--registry", str(registry), "install", "acme/devtools", "--model", str(model), check=True
    )
    home = Home.resolve(env["ONTOSKILLS_HOME"])
    folder = home.derived_dir / expand.WORDS_DIR
    files = sorted(folder.iterdir())
    assert [f.suffix for f in files] == [".json", ".npy"]
    vocab = json.loads(files[0].read_text())
    assert "debug" in vocab or "debugging" in vocab
    stamp = [f.stat().st_mtime_ns for f in files]
    svc = service(env)
    resp = svc.search("repair the fault in my unit checks", mode="hybrid")
    assert resp.results and svc.state.words is not None
    assert [f.stat().st_mtime_ns for f in sorted(folder.iterdir())] == stamp
