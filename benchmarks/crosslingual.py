"""The cross-language stage's own cost per query (issue 26; docs/SEARCH.md "Other languages").

    python benchmarks/crosslingual.py [--work DIR]

`crosslingual.english(q, vocabulary)` over the full registry's BM25 vocabulary, for the
English dev queries (../shared/queries-dev.jsonl, queries-full-dev.jsonl: the stage must
return them unchanged) and benchmarks/lang-dev.jsonl; plus the glossary's load time and the
hostile extremes (2,000 scored characters of CJK, of one repeated word). End-to-end search
p50 is quality.py's column; this isolates what the stage adds to it, which the shared
machine's load hides. Each query is run 5 times after a warm-up; p50 / max in microseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import quality
from _store import REPO, shared_dir

from ontoskills.search import crosslingual


def timed(queries: list[str], vocab: object) -> tuple[float, float, int]:
    costs: list[float] = []
    changed = 0
    for q in queries:
        crosslingual.english(q, vocab)  # type: ignore[arg-type]
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            out = crosslingual.english(q, vocab)  # type: ignore[arg-type]
            runs.append(time.perf_counter() - t)
        changed += out is not q and out != q
        costs.append(statistics.median(runs) * 1e6)
    return statistics.median(costs), max(costs), changed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, help="installed homes, as quality.py --work")
    args = ap.parse_args()
    t = time.perf_counter()
    crosslingual.glossary()
    load_ms = (time.perf_counter() - t) * 1e3
    work = args.work or Path(tempfile.mkdtemp(prefix="xl-"))
    svc = quality.service_for(work, shared_dir() / "ontostore-full", {})
    vocab = svc.catalog.view.index.ranker.bm25.terms

    def read(path: Path) -> list[str]:
        return [json.loads(x)["q"] for x in path.read_text("utf-8").splitlines() if x.strip()]

    sets = {
        "English dev (60)": read(shared_dir() / "queries-dev.jsonl"),
        "English full dev (200)": read(shared_dir() / "queries-full-dev.jsonl"),
        "lang-dev (54)": read(REPO / "benchmarks" / "lang-dev.jsonl"),
        "2,000 CJK chars": ["漢字の" * 667],
        "2,000 chars, one word": ["factura " * 250],
    }
    print(f"glossary load (once per process): {load_ms:.1f} ms")
    print(f"{'queries':<24} {'p50 us':>8} {'max us':>8} {'rendered differently':>22}")
    for name, queries in sets.items():
        p50, worst, changed = timed(queries, vocab)
        print(f"{name:<24} {p50:>8.0f} {worst:>8.0f} {changed:>10} of {len(queries)}")


if __name__ == "__main__":
    main()
