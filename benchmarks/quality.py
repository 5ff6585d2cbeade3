"""Search quality: Recall@1, Recall@5, MRR per mode on the labelled dev sets, plus confidence.

    python benchmarks/quality.py [--set dev|full|both] [--work DIR] [--calibrate] [-v]
    # dev:  ../shared/queries-dev.jsonl       over ../shared/ontostore      (60 queries)
    # full: ../shared/queries-full-dev.jsonl  over ../shared/ontostore-full (200 queries)
    # model for semantic/hybrid: ../shared/models

Every package of the registry is installed (stored vectors + the model, so missing vectors
are derived) into a home and EVERY skill is enabled (skillsbench ships default_enabled:
false). With `--work DIR` the installed homes are kept in DIR and reused by the next run
(the search index is always rebuilt, so code changes are measured).

How it counts:
- R@1 / R@5 / MRR over the positive queries (a non-empty `expect`), top_k 10. A result is a
  hit when its key, or any key in its `also_in` (copies of the same skill collapsed into
  it, docs/SEARCH.md), is expected.
- neg flagged: negative queries (`expect: []`) answered with confidence `low` or `none`.
- pos high+hit@5: positives answered `high` with an expected skill in the top 5 (what an
  agent acting on a `high` answer needs); pos high+hit@1 is the stricter variant.
- bm25 is what a home without the model gets (confidence from BM25 evidence alone).
- MCP answer: chars of text + compact structuredContent JSON of the `ontoskill` search
  answer (top_k 5, auto mode) over the queries that are searches (p50 / p90 / max).
- --calibrate prints the confidence evidence of every negative and of the weakest
  positives (search/confidence.py reads these values), per mode;
  benchmarks/confidence_cv.py fits the rule's constants with cross-validation.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _store import install_store, shared_dir

from ontoskills.config import Config, SearchMode
from ontoskills.paths import Home
from ontoskills.search import confidence
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize
from ontoskills.server.answers import answer_size
from ontoskills.server.app import ServeOptions, run_tool

MODES = tuple(m.value for m in SearchMode if m is not SearchMode.AUTO)  # each measured
SETS = {
    "dev": ("queries-dev.jsonl", "ontostore"),
    "full": ("queries-full-dev.jsonl", "ontostore-full"),
}


def keys_of(result: Any) -> set[str]:
    return {result.skill, *getattr(result, "also_in", ())}


def evaluate(service: SkillService, queries: list[dict], mode: str, verbose: bool) -> dict:
    pos = [q for q in queries if q["expect"]]
    neg = [q for q in queries if not q["expect"]]
    r1 = r5 = rr = high_hit5 = high_hit1 = 0.0
    flagged = 0
    times = []
    for q in queries:
        t = time.perf_counter()
        resp = service.search(q["q"], top_k=10, mode=mode)
        times.append((time.perf_counter() - t) * 1000)
        confidence = getattr(resp, "confidence", "high")  # main's code had none: "high"
        if not q["expect"]:
            flagged += confidence in ("low", "none")
            if verbose and confidence == "high":
                top = [r.skill for r in resp.results[:2]]
                print(f"  [{mode}] negative answered high: {q['q']!r} -> {top}")
            continue
        want = set(q["expect"])
        rank = next((n for n, r in enumerate(resp.results, 1) if keys_of(r) & want), None)
        r1 += rank == 1
        r5 += rank is not None and rank <= 5
        rr += 1 / rank if rank else 0.0
        high_hit5 += confidence == "high" and rank is not None and rank <= 5
        high_hit1 += confidence == "high" and rank == 1
        if verbose and (rank != 1 or confidence != "high"):
            top = [r.skill for r in resp.results[:3]]
            print(f"  [{mode}] rank {rank} {confidence}: {q['q']!r} -> {top} (want {q['expect']})")
    n = len(pos) or 1
    times.sort()
    return {
        "R@1": r1 / n,
        "R@5": r5 / n,
        "MRR": rr / n,
        "neg": f"{flagged}/{len(neg)}",
        "high5": high_hit5 / n,
        "high1": high_hit1 / n,
        "p50": times[len(times) // 2],
        "positives": len(pos),
    }


def answer_sizes(service: SkillService, queries: list[dict]) -> str:
    sizes = []
    for q in queries:
        result = run_tool(service, q["q"], 5, ServeOptions())
        if result.structured_content and result.structured_content["kind"] == "search":
            text = "".join(getattr(c, "text", "") for c in result.content)
            sizes.append(answer_size(text, result.structured_content))
    sizes.sort()
    if not sizes:
        return "-"
    return f"{sizes[len(sizes) // 2]} / {sizes[int(len(sizes) * 0.9)]} / {sizes[-1]}"


def calibrate(service: SkillService, queries: list[dict], mode: str) -> None:
    """The evidence confidence.py reads, for the negatives and the weakest positives."""
    state = service.state
    encoder = service.catalog.encoder() if mode != "bm25" else None
    rows = []
    for q in queries:
        lookup = state.names.resolve(q["q"])
        qvec = encoder.encode_one(q["q"]) if encoder is not None else None
        ranking = state.ranker.rank(tokenize(q["q"]), qvec, mode, -1, 10, lookup)
        if not ranking.hits or lookup is not None:
            continue
        cos = ranking.best_cosine
        meaning = None if cos is None else cos - confidence.UNKNOWN_COSINE * ranking.unknown
        words = ranking.coverage - ranking.unknown
        key = meaning if meaning is not None else words
        agree = "agree" if confidence.agree(ranking) else ""
        rows.append((key, "NEG" if not q["expect"] else "pos", meaning, words, agree, q["q"]))
    rows.sort(key=lambda r: r[0])
    print(
        f"  [{mode}] negatives, then the 12 weakest positives (meaning = cosine - "
        f"{confidence.UNKNOWN_COSINE} * unknown, words = coverage - unknown, agree = BM25 "
        f"first and semantic top {confidence.AGREE_SEMANTIC_RANK}):"
    )
    weak = [r for r in rows if r[1] == "pos"][:12]
    for _, kind, meaning, words, agree, text in [r for r in rows if r[1] == "NEG"] + weak:
        m = "-" if meaning is None else f"{meaning:.3f}"
        print(f"    {kind} meaning {m:>6} words {words:6.3f} {agree:5}  {text[:64]}")


def home_for(work: Path, name: str, registry: Path, model: Path) -> Home:
    folder = work / name
    home = Home(folder / "home")
    if home.default_lockfile.is_file():
        shutil.rmtree(home.derived_dir / "search-index", ignore_errors=True)
        return home
    shutil.rmtree(folder, ignore_errors=True)
    t = time.perf_counter()
    home = install_store(folder, registry, model=model)
    print(f"(installed {registry.name} in {time.perf_counter() - t:.0f}s)", file=sys.stderr)
    return home


def run_set(work: Path, name: str, modes: tuple[str, ...], verbose: bool) -> list[tuple]:
    shared = shared_dir()
    queries_file, registry_name = SETS[name]
    queries = [
        json.loads(line)
        for line in (shared / queries_file).read_text().splitlines()
        if line.strip()
    ]
    home = home_for(work, name, shared / registry_name, shared / "models")
    t = time.perf_counter()
    service = SkillService(home, home.default_lockfile, Config(path=home.config_file))
    build = time.perf_counter() - t
    skills = len(service.skills())
    print(f"{queries_file}: {len(queries)} queries, {skills} skills, index build {build:.1f}s")
    rows = []
    for mode in modes:
        rows.append((name, mode, evaluate(service, queries, mode, verbose)))
        if "--calibrate" in sys.argv and mode in ("bm25", "hybrid"):
            calibrate(service, queries, mode)
    print(f"MCP search answer chars, top_k 5 (p50 / p90 / max): {answer_sizes(service, queries)}")
    return rows


def main() -> None:
    argv = sys.argv[1:]
    verbose = "-v" in argv
    which = argv[argv.index("--set") + 1] if "--set" in argv else "both"
    names = ("dev", "full") if which == "both" else (which,)
    modes = tuple(argv[argv.index("--modes") + 1].split(",")) if "--modes" in argv else MODES
    rows: list[tuple] = []
    if "--work" in argv:
        work = Path(argv[argv.index("--work") + 1])
        work.mkdir(parents=True, exist_ok=True)
        for name in names:
            rows += run_set(work, name, modes, verbose)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                rows += run_set(Path(tmp), name, modes, verbose)
    head = "{:<6}{:<10}{:>5}{:>7}{:>7}{:>7}{:>7}{:>9}{:>9}{:>8}"
    print(head.format("set", "mode", "pos", "R@1", "R@5", "MRR", "neg", "hi+@5", "hi+@1", "p50ms"))
    for name, mode, m in rows:
        print(
            f"{name:<6}{mode:<10}{m['positives']:>5}{m['R@1']:>7.3f}{m['R@5']:>7.3f}"
            f"{m['MRR']:>7.3f}{m['neg']:>7}{m['high5']:>9.3f}{m['high1']:>9.3f}{m['p50']:>8.1f}"
        )


if __name__ == "__main__":
    main()
