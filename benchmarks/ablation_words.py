"""What was tried for issue 26 (answers when the words differ), each variant on every set.

    python benchmarks/ablation_words.py [--work DIR] [--chunks] [--only NAME,NAME]

Every query of the four sets (dev, full dev, heldout-full, heldout-words) is scored once
(BM25 per skill, the query's cosine to every vector); each variant then fuses those arrays
its own way and the shipped candidate walk (`Ranker.candidates`: copies collapsed, the
looked-up skill pinned) turns them into results, so a variant differs from the shipped
hybrid ranking only in its fusion. Prints hybrid R@1 / R@5 per set and, for the held-out
sets, R@1 of the kinds issue 26 is about (paraphrase, lang / foreign).

`--chunks` also encodes the full catalog's body chunks (section titles, knowledge
directives, workflow names and steps: the "say" texts of every module, ~37,000; minutes on
2 cores, cached in DIR) and adds the chunk variants (docs/SEARCH.md "Issue 26").
Nothing here is shipped: docs/SEARCH.md says which variant was kept (none) and why.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _store import shared_dir
from quality import BENCH, SETS, home_for

from ontoskills.config import Config
from ontoskills.search import documents
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.ranking import Ranker, Scores
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize
from ontoskills.skillheader import read_skill_header

ALL_SETS = {**SETS, "words": (str(BENCH / "heldout-words.jsonl"), "ontostore-full")}
Row = dict[str, Any]
Variant = Callable[[Ranker, Row], np.ndarray]


def norm(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, None)
    top = float(x.max()) if len(x) else 0.0
    return x / top if top > 0 else x


def rows_for(service: SkillService, queries: list[dict]) -> list[Row]:
    state = service.state
    encoder = service.catalog.encoder()
    assert encoder is not None and state.ranker.semantic is not None
    out = []
    for q in queries:
        if q.get("kind") == "hostile":
            continue
        text = q["q"][:2000]
        terms = tokenize(text)
        vec = encoder.encode_one(text)
        sims = state.ranker.semantic.similarities(vec)
        out.append(
            {
                "q": q,
                "terms": terms,
                "vec": vec,
                "bm": state.ranker.bm25.scores(terms),
                "sims": sims,
                "sem": state.ranker.semantic.best_per_skill(sims),
                "lookup": state.names.resolve(text),
            }
        )
    return out


def evaluate(ranker: Ranker, rows: list[Row], variant: Variant) -> tuple[float, float, dict]:
    r1 = r5 = n = 0
    kinds: dict[str, list[int]] = {}
    for row in rows:
        q = row["q"]
        if not q["expect"]:
            continue
        final = variant(ranker, row) * ranker.trust
        scores = Scores(row["terms"], "hybrid", row["bm"], row["sem"], row["sims"], final)
        hits, _ = ranker.candidates(scores, -1, 10, row["lookup"])
        recs = ranker.records
        shown = [{recs[h.index].key, *(recs[m].key for m in h.also_in)} for h in hits]
        rank = next((i for i, keys in enumerate(shown, 1) if keys & set(q["expect"])), None)
        per = kinds.setdefault(q.get("kind", "?"), [0, 0])
        per[0] += 1
        per[1] += rank == 1
        n += 1
        r1 += rank == 1
        r5 += rank is not None and rank <= 5
    return r1 / max(n, 1), r5 / max(n, 1), kinds


# ---------------------------------------------------------------------------- variants
def shipped(ranker: Ranker, row: Row) -> np.ndarray:
    return ranker.fuse(row["bm"], row["sem"])


def alpha(a: float) -> Variant:
    return lambda ranker, row: a * norm(row["sem"]) + (1 - a) * norm(row["bm"])


def rrf(k: int) -> Variant:
    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        out = np.zeros(len(row["bm"]), np.float32)
        for s in (row["bm"], row["sem"]):
            rank = np.empty(len(s))
            rank[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
            out += np.where(s > 0, 1.0 / (k + rank), 0.0).astype(np.float32)
        return out

    return fuse


def bm25_top_coverage(c: float) -> Variant:
    """BM25 side scaled by how much of the query its own winner covers (stray words)."""

    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        bm = row["bm"]
        if float(bm.max()) <= 0:
            return shipped(ranker, row)
        cov, _ = ranker.bm25.evidence(row["terms"], int(np.argmax(bm)))
        return 0.5 * norm(row["sem"]) + 0.5 * norm(bm) * min(1.0, cov / c)

    return fuse


def bm25_coverage_each(p: float) -> Variant:
    """Each of BM25's top 50 scaled by its own coverage of the query, to the power p."""

    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        bm = row["bm"].copy()
        for i in np.argsort(-bm)[:50]:
            if bm[i] > 0:
                bm[i] *= ranker.bm25.evidence(row["terms"], int(i))[0] ** p
        return 0.5 * norm(row["sem"]) + 0.5 * norm(bm)

    return fuse


def feedback(beta: float, k: int = 3) -> Variant:
    """Pseudo-relevance feedback from the skills' own intents: the query vector moved
    towards the best-matching vectors of the fused top k, then re-scored."""

    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        sem_index = ranker.semantic
        assert sem_index is not None
        vecs = []
        for i in np.argsort(-shipped(ranker, row))[:k]:
            lo = int(np.searchsorted(sem_index.owner, i, "left"))
            hi = int(np.searchsorted(sem_index.owner, i, "right"))
            if hi > lo:
                vecs.append(sem_index.vectors[lo + int(np.argmax(row["sims"][lo:hi]))])
        if not vecs:
            return shipped(ranker, row)
        moved = row["vec"] + beta * np.mean(vecs, axis=0)
        moved /= np.linalg.norm(moved)
        sem = sem_index.best_per_skill(sem_index.similarities(moved))
        return 0.5 * norm(sem) + 0.5 * norm(row["bm"])

    return fuse


def bm25_weights(body: float = 0.5, **fields: int) -> Variant:
    """BM25 rebuilt with other field weights (documents.FIELD_WEIGHTS) or body weight."""
    built: dict[int, BM25Index] = {}

    def index(ranker: Ranker) -> BM25Index:
        if id(ranker) not in built:
            data = SERVICE_OF[id(ranker)].state.data
            assert data.bodies is not None  # a fresh build (home_for drops the snapshot)
            old = dict(documents.FIELD_WEIGHTS)
            documents.FIELD_WEIGHTS.update(fields)
            try:
                docs = [documents.skill_document(r) for r in data.records]
            finally:
                documents.FIELD_WEIGHTS.clear()
                documents.FIELD_WEIGHTS.update(old)
            bodies = [documents.body_document(b) for b in data.bodies]
            built[id(ranker)] = BM25Index(docs, bodies, body_weight=body)
        return built[id(ranker)]

    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        return 0.5 * norm(row["sem"]) + 0.5 * norm(index(ranker).scores(row["terms"]))

    return fuse


SERVICE_OF: dict[int, SkillService] = {}  # ranker -> its service (bm25_weights reads bodies)


class Chunks:
    """Body chunk vectors of the full catalog (cached in the work folder)."""

    def __init__(self, service: SkillService, work: Path) -> None:
        cache = work / "chunks.npz"
        records = service.state.data.records
        self.n = len(records)  # the catalog these chunks belong to (the full registry)
        if cache.is_file():
            got = np.load(cache, allow_pickle=False)
            self.owner, self.vectors = got["owner"], got["vectors"]
            return
        owner, texts = [], []
        for i, r in enumerate(records):
            seen: set[str] = set()
            for module in r.modules:
                path = Path(r.root) / module
                head = read_skill_header(path.read_bytes(), str(path), lenient=True)
                for text in head.body.get("say", []) if head is not None else []:
                    text = " ".join(text.split())[:300]
                    if len(text) >= 12 and text not in seen:
                        seen.add(text)
                        owner.append(i)
                        texts.append(text)
        encoder = service.catalog.encoder()
        assert encoder is not None
        t = time.perf_counter()
        self.vectors = encoder.encode(texts)
        self.owner = np.asarray(owner, np.int32)
        print(f"encoded {len(texts)} body chunks in {time.perf_counter() - t:.0f} s")
        np.savez(cache, owner=self.owner, vectors=self.vectors)

    def best(self, vec: np.ndarray, n: int) -> np.ndarray:
        out = np.full(n, -1.0, np.float32)
        np.maximum.at(out, self.owner, self.vectors @ vec)
        return out


def chunk_variants(chunks: Chunks) -> dict[str, Variant]:
    memo: dict[int, np.ndarray] = {}

    def best(row: Row) -> np.ndarray:
        if len(row["bm"]) != chunks.n:  # another catalog (the dev subset): no chunks
            return np.zeros(0, np.float32)
        if id(row) not in memo:
            memo[id(row)] = chunks.best(row["vec"], len(row["bm"]))
        return memo[id(row)]

    def max_chunk(w: float) -> Variant:
        def fuse(ranker: Ranker, row: Row) -> np.ndarray:
            if len(best(row)) != len(row["sem"]):
                return shipped(ranker, row)
            return 0.5 * norm(np.maximum(row["sem"], w * best(row))) + 0.5 * norm(row["bm"])

        return fuse

    def third(w: float) -> Variant:
        def fuse(ranker: Ranker, row: Row) -> np.ndarray:
            if len(best(row)) != len(row["sem"]):
                return shipped(ranker, row)
            return shipped(ranker, row) + w * norm(best(row))

        return fuse

    return {
        "chunks: max(sem, 0.85 chunk)": max_chunk(0.85),
        "chunks: max(sem, 1.0 chunk)": max_chunk(1.0),
        "chunks: third ranker 0.2": third(0.2),
        "chunks: third ranker 0.3": third(0.3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path)
    ap.add_argument("--chunks", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    tmp = None if args.work else tempfile.TemporaryDirectory()
    work = args.work or Path(tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    shared = shared_dir()
    services: dict[str, SkillService] = {}
    data: dict[str, tuple[Ranker, list[Row]]] = {}
    for name, (file, registry) in ALL_SETS.items():
        if registry not in services:
            home = home_for(work, shared / registry, shared / "models")
            services[registry] = SkillService(
                home, home.default_lockfile, Config(path=home.config_file)
            )
        path = shared / file  # an absolute path stays as it is
        queries = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        data[name] = (services[registry].state.ranker, rows_for(services[registry], queries))
        SERVICE_OF[id(services[registry].state.ranker)] = services[registry]
    variants: dict[str, Variant] = {
        "shipped (0.5 sem + 0.5 bm25)": shipped,
        "alpha 0.6": alpha(0.6),
        "alpha 0.7": alpha(0.7),
        "rrf k=10": rrf(10),
        "rrf k=60": rrf(60),
        "bm25 x min(1, top coverage/0.5)": bm25_top_coverage(0.5),
        "bm25 x min(1, top coverage/0.7)": bm25_top_coverage(0.7),
        "bm25 x coverage each": bm25_coverage_each(1.0),
        "intent feedback 0.3": feedback(0.3),
        "intent feedback 0.6": feedback(0.6),
        "bm25 body weight 0.3": bm25_weights(0.3),
        "bm25 body weight 0.7": bm25_weights(0.7),
        "bm25 intents x2": bm25_weights(intents=2),
        "bm25 description x2": bm25_weights(description=2),
        "bm25 package name x0": bm25_weights(package=0),
    }
    if args.chunks:
        variants.update(chunk_variants(Chunks(services["ontostore-full"], work)))
    only = [v for v in args.only.split(",") if v]
    print(f"{'variant':<34}" + "".join(f"{n:>16}" for n in data) + "   held-out kinds R@1")
    for label, variant in variants.items():
        if only and not any(o in label for o in only):
            continue
        cells, kinds_out = [], []
        for name, (ranker, rows) in data.items():
            r1, r5, kinds = evaluate(ranker, rows, variant)
            cells.append(f"{r1:.3f}/{r5:.3f}")
            for kind in ("paraphrase", "lang", "foreign"):
                if name in ("heldout", "words") and kind in kinds:
                    n, h1 = kinds[kind]
                    kinds_out.append(f"{name}:{kind} {h1 / n:.2f}")
        print(f"{label:<34}" + "".join(f"{c:>16}" for c in cells) + "   " + " ".join(kinds_out))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
