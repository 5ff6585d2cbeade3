from __future__ import annotations

import numpy as np

from ontoskills.search.semantic import CHUNK_ROWS, SemanticIndex


def test_best_intent_per_skill_and_chunked_products() -> None:
    rng = np.random.default_rng(1)
    n_rows = CHUNK_ROWS * 2 + 17  # forces the chunked path
    vectors = rng.standard_normal((n_rows, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owner = rng.integers(0, 300, n_rows).astype(np.int32)
    owner[owner == 5] = 6  # skill 5 has no vectors
    index = SemanticIndex(vectors, owner, 301)
    query = vectors[42]
    sims = index.similarities(query)
    assert np.allclose(np.sort(sims), np.sort(vectors @ query), atol=1e-5)
    best = index.best_per_skill(sims)
    for skill in (0, 6, 299):
        assert best[skill] == np.float32((vectors[owner == skill] @ query).max())
    assert best[5] == -1.0 and best[300] == -1.0
    assert index.top_rows(sims, int(owner[42]), 1) == [42]  # the query's own row wins
    assert index.top_rows(sims, 5) == []


def test_empty_index() -> None:
    index = SemanticIndex(np.zeros((0, 4), np.float32), np.zeros(0, np.int32), 3)
    assert index.best_per_skill(index.similarities(np.ones(4, np.float32))).tolist() == [-1.0] * 3
