"""Cosine similarity of the query against every intent vector, best intent per skill."""

from __future__ import annotations

import numpy as np

# Rows per matrix-vector product. Bigger products switch OpenBLAS to its thread pool, whose
# threads spin against a busy CPU: 6k x 384 took 30 ms instead of 0.3 ms on a loaded 2-core
# machine; chunks stay single-threaded and predictable (30k rows: ~5 ms).
CHUNK_ROWS = 1024


class SemanticIndex:
    def __init__(
        self,
        vectors: np.ndarray,
        owner: np.ndarray,
        n_skills: int,
        views: np.ndarray | None = None,
    ) -> None:
        if len(owner) and bool(np.all(owner[1:] >= owner[:-1])):
            # Already grouped (a snapshot stores them so): used as they are, so vectors
            # memory-mapped from the snapshot stay the file's pages, not a heap copy.
            order = np.arange(len(owner))
            self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            self.owner = owner
        else:
            order = np.argsort(owner, kind="stable")
            self.vectors = np.ascontiguousarray(vectors[order], dtype=np.float32)
            self.owner = owner[order]
        self.row_ids = order  # position in the original (vector_text) order
        self.n_skills = n_skills
        # Whole-skill vectors [n_skills, k, dim] (catalog/model.SkillRecord.view_texts), kept
        # flat so one product scores them; None when the catalog has none.
        self.views: np.ndarray | None = None
        if views is not None and views.ndim == 3 and views.shape[0] == n_skills and n_skills:
            self.views = np.ascontiguousarray(views.reshape(-1, views.shape[2]), np.float32)
            self.n_views = int(views.shape[1])
        if len(self.owner):
            self.starts = np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])
            self.skills = self.owner[self.starts]
        else:
            self.starts = np.zeros(0, dtype=np.int64)
            self.skills = np.zeros(0, dtype=np.int32)

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    def similarities(self, query: np.ndarray) -> np.ndarray:
        return self.similarities_of(self.vectors, query)

    @staticmethod
    def similarities_of(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
        q = np.ascontiguousarray(query, dtype=np.float32)
        n = matrix.shape[0]
        if n <= CHUNK_ROWS:
            return matrix @ q
        out = np.empty(n, dtype=np.float32)
        for start in range(0, n, CHUNK_ROWS):
            np.matmul(matrix[start : start + CHUNK_ROWS], q, out=out[start : start + CHUNK_ROWS])
        return out

    def best_per_skill(self, sims: np.ndarray) -> np.ndarray:
        """Max cosine per skill; -1 for skills without vectors."""
        out = np.full(self.n_skills, -1.0, dtype=np.float32)
        if len(sims):
            out[self.skills] = np.maximum.reduceat(sims, self.starts)
        return out

    def meaning(self, query: np.ndarray, best: np.ndarray) -> np.ndarray:
        """How close the query is to each skill: the mean of its best intent's cosine and
        its whole-skill views' cosines (issue 26: a paraphrase close to no single intent is
        often close to the skill read whole). `best` as is when there are no views."""
        if self.views is None or self.views.shape[1] != len(query):
            return best
        sims = self.similarities_of(self.views, query).reshape(self.n_skills, self.n_views)
        return ((best + sims.sum(axis=1)) / (1 + self.n_views)).astype(np.float32)

    def top_rows(self, sims: np.ndarray, skill: int, n: int = 2) -> list[int]:
        """Original row ids of a skill's best-matching intents."""
        lo = np.searchsorted(self.owner, skill, side="left")
        hi = np.searchsorted(self.owner, skill, side="right")
        if lo == hi:
            return []
        best = np.argsort(-sims[lo:hi], kind="stable")[:n]
        return [int(self.row_ids[lo + i]) for i in best]
