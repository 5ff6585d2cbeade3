"""Soft term matching (search/expand.py): hybrid R@1 / R@5 / MRR per dev set and kind for a
grid of FLOOR x ALPHA (x CAP), to choose the constants on the dev sets only.

    python benchmarks/expand_tune.py --work DIR [--grid 0.5:0.3,0.6:0.5,...] [--cap 0.5]
    python benchmarks/expand_tune.py --work DIR --cost   # vocabulary size, encode, per query

DIR: the homes benchmarks/quality.py --work keeps (installed once, reused). "off" = no
expansion (ALPHA 0). Sets: dev (ontostore), full dev and paraphrase-dev (ontostore-full).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _store import shared_dir
from quality import BENCH, evaluate, home_for

from ontoskills.config import Config
from ontoskills.search import expand
from ontoskills.search.expand import catalog_words
from ontoskills.search.service import SkillService

MS = 1000.0

SETS = [  # name, queries file, registry folder under ../shared
    ("dev", shared_dir() / "queries-dev.jsonl", "ontostore"),
    ("full", shared_dir() / "queries-full-dev.jsonl", "ontostore-full"),
    ("para", BENCH / "paraphrase-dev.jsonl", "ontostore-full"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--grid", default="off,0.5:0.5,0.55:0.5,0.6:0.5,0.65:0.5,0.6:0.3,0.6:0.8")
    ap.add_argument("--cap", type=float, default=expand.CAP)
    ap.add_argument("--per-word", type=int, default=expand.PER_WORD)
    ap.add_argument("--cost", action="store_true")
    args = ap.parse_args()
    services: dict[str, SkillService] = {}
    for _, _, reg in SETS:
        if reg not in services:
            home = home_for(args.work, shared_dir() / reg, shared_dir() / "models")
            services[reg] = SkillService(home, home.default_lockfile, Config(path=home.config_file))
    queries = {
        n: [json.loads(x) for x in f.read_text().splitlines() if x.strip()] for n, f, _ in SETS
    }
    if args.cost:
        cost(services["ontostore-full"], queries["full"] + queries["para"])
        return
    expand.CAP, expand.PER_WORD = args.cap, args.per_word
    print(f"cap {expand.CAP} per_word {expand.PER_WORD}")
    for point in args.grid.split(","):
        if point == "off":
            expand.ALPHA = 0.0
            expand.FLOOR = 2.0  # nothing is a neighbour
        else:
            floor, alpha = (float(x) for x in point.split(":"))
            expand.FLOOR, expand.ALPHA = floor, alpha
        cells = []
        for name, _, reg in SETS:
            r = evaluate(services[reg], queries[name], "hybrid", False)
            kinds = " ".join(
                f"{k}:{v[1] / v[0]:.2f}/{v[2] / v[0]:.2f}" for k, v in sorted(r["kinds"].items())
            )
            cells.append(
                f"{name} {r['R@1']:.3f}/{r['R@5']:.3f}/{r['MRR']:.3f} neg {r['neg']}"
                f" hi+@1 {r['high1']:.2f} p50 {r['p50']:.1f} [{kinds}]"
            )
        print(f"{point:>10}  " + " | ".join(cells))
        sys.stdout.flush()


def cost(service: SkillService, queries: list[dict]) -> None:
    """The one-off vocabulary encode (cold cache), its warm load, and per query: the
    neighbour lookup alone and a whole hybrid search with and without expansion."""
    view = service.catalog.view
    state, encoder = view.index, view.encoder.get()
    assert encoder is not None
    folder = Path(tempfile.mkdtemp(prefix="word-vectors-"))
    try:
        t = time.perf_counter()
        words = catalog_words(state.data.records, state.ranker.bm25, folder, "bench", encoder)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        catalog_words(state.data.records, state.ranker.bm25, folder, "bench", encoder)
        warm = time.perf_counter() - t
        size = sum(f.stat().st_size for f in folder.iterdir())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    shape = f"{len(words.words)} words x {words.matrix.shape[1]} dims"
    print(f"vocabulary {shape}, cache {size / 1e6:.1f} MB")
    print(f"encode (cold) {cold:.1f} s, load (warm cache, incl. vocabulary) {warm * MS:.0f} ms")
    texts = [q["q"] for q in queries]
    lookup = []
    for q in texts:
        t = time.perf_counter()
        words.neighbours(q, encoder.encode)
        lookup.append((time.perf_counter() - t) * MS)
    print(f"neighbours per query: p50 {_pct(lookup, 50):.1f} ms, p90 {_pct(lookup, 90):.1f} ms")
    for label in ("search, expansion off", "search, expansion on", "search, expansion off"):
        if "off" in label:  # not even looked up: the code path before expand.py
            service._neighbours = lambda view, text: {}  # type: ignore[method-assign]
        else:
            del service._neighbours
        took = []
        for q in texts:
            t = time.perf_counter()
            service.search(q, top_k=5, mode="hybrid")
            took.append((time.perf_counter() - t) * MS)
        print(f"{label}: p50 {_pct(took, 50):.1f} ms, p90 {_pct(took, 90):.1f} ms")


def _pct(values: list[float], p: int) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, len(values) * p // 100)]


if __name__ == "__main__":
    main()
