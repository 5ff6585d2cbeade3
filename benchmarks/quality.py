"""Search quality: Recall@1, Recall@5, MRR per mode on labelled query sets, plus confidence.

    python benchmarks/quality.py [--set dev|full|heldout|both|all|A,B] [--work DIR]
                                 [--queries FILE [--registry NAME]] [--modes M,M]
                                 [--by-kind] [--calibrate] [-v]
    # dev:     ../shared/queries-dev.jsonl          over ../shared/ontostore      (60 queries)
    # full:    ../shared/queries-full-dev.jsonl     over ../shared/ontostore-full (200 queries)
    # heldout: benchmarks/heldout-full.jsonl        over ../shared/ontostore-full (167 queries,
    #          written blind to the dev sets: benchmarks/heldout-full.md)
    # both = dev,full; all = dev,full,heldout; --queries runs any file of the same format
    # over --registry (a folder name under ../shared, default ontostore-full)
    # --skillmd: benchmarks/skillmd-dev.jsonl (or --queries) over the Agent Skills repositories
    #            of ../shared/skillmd-repos, each a registry of kind `skills` (docs/SEARCH.md)
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
- hostile queries (`"kind": "hostile"`) are not in R@k / MRR: each is run in every mode and
  through the MCP tool body, and counted as failing on an exception, an error result
  (`isError`), more than 1 s, or a missed `"outcome"` ("low": answered low/none; "hit": an
  expected skill in the top 5; "ok": only the first three).
- --by-kind prints R@1 / R@5 / MRR per query kind (paraphrase, messy, code, ...).
- --calibrate prints the confidence evidence of every negative and of the weakest
  positives (search/confidence.py reads these values), per mode;
  benchmarks/confidence_cv.py fits the rule's constants with cross-validation.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _store import SKILLMD, install_skillmd, install_store, shared_dir

from ontoskills.config import Config, SearchMode
from ontoskills.paths import Home
from ontoskills.search import confidence
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize
from ontoskills.server.answers import answer_size
from ontoskills.server.app import ServeOptions, ToolInputError, check_arguments, run_tool

MODES = tuple(m.value for m in SearchMode if m is not SearchMode.AUTO)  # each measured
BENCH = Path(__file__).resolve().parent
SETS = {  # name -> (queries file, relative to ../shared unless absolute; registry folder)
    "dev": ("queries-dev.jsonl", "ontostore"),
    "full": ("queries-full-dev.jsonl", "ontostore-full"),
    "heldout": (str(BENCH / "heldout-full.jsonl"), "ontostore-full"),
    # issue 26's blind sets (paraphrases, other languages, near misses)
    "words": (str(BENCH / "heldout-words.jsonl"), "ontostore-full"),
    "words2": (str(BENCH / "heldout-words2.jsonl"), "ontostore-full"),
    "words3": (str(BENCH / "heldout-words3.jsonl"), "ontostore-full"),
}
GROUPS = {"both": ("dev", "full"), "all": ("dev", "full", "heldout")}
HOSTILE_MS = 1000.0  # a hostile query answered slower than this is a bug (brief: > 1 s)


def keys_of(result: Any) -> set[str]:
    return {result.skill, *getattr(result, "also_in", ())}


def evaluate(service: SkillService, queries: list[dict], mode: str, verbose: bool) -> dict:
    queries = [q for q in queries if q.get("kind") != "hostile"]  # scored by hostile()
    pos = [q for q in queries if q["expect"]]
    neg = [q for q in queries if not q["expect"]]
    r1 = r5 = rr = high_hit5 = high_hit1 = 0.0
    flagged = 0
    times = []
    # kind -> [n, hits@1, hits@5, reciprocal ranks, high and right @5]
    kinds: dict[str, list[float]] = {}
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
        per = kinds.setdefault(q.get("kind", "?"), [0, 0, 0, 0.0, 0])
        per[0] += 1
        per[1] += rank == 1
        per[2] += rank is not None and rank <= 5
        per[3] += 1 / rank if rank else 0.0
        per[4] += confidence == "high" and rank is not None and rank <= 5
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
        "kinds": kinds,
    }


def hostile(service: SkillService, queries: list[dict], modes: tuple[str, ...]) -> list[str]:
    """Every hostile query in every mode, then through the MCP tool body: what failed."""
    failures = []
    worst = 0.0
    for q in (q for q in queries if q.get("kind") == "hostile"):
        label = repr(q["q"][:40])
        for mode in modes:
            t = time.perf_counter()
            try:
                resp = service.search(q["q"], top_k=5, mode=mode)
            except Exception as exc:  # any exception is the finding
                failures.append(f"{mode} {label}: raised {type(exc).__name__}: {exc}")
                continue
            ms = (time.perf_counter() - t) * 1000
            worst = max(worst, ms)
            if ms > HOSTILE_MS:
                failures.append(f"{mode} {label}: {ms:.0f} ms")
            outcome = q.get("outcome", "ok")
            if outcome == "low" and resp.confidence == "high":
                top = [r.skill for r in resp.results[:2]]
                failures.append(f"{mode} {label}: answered high ({top})")
            if outcome == "hit" and not any(
                keys_of(r) & set(q["expect"]) for r in resp.results[:5]
            ):
                failures.append(f"{mode} {label}: expected skill not in the top 5")
        try:
            q_text, top_k = check_arguments({"q": q["q"], "top_k": 5})
            result = run_tool(service, q_text, top_k, ServeOptions())
            if result.is_error:
                failures.append(f"mcp {label}: error result")
        except ToolInputError as exc:
            failures.append(f"mcp {label}: input refused: {exc}")
        except Exception as exc:
            failures.append(f"mcp {label}: raised {type(exc).__name__}: {exc}")
    n = sum(q.get("kind") == "hostile" for q in queries)
    print(
        f"hostile: {n} queries x {len(modes)} modes + MCP, slowest search {worst:.0f} ms, "
        f"{len(failures)} failure(s)"
    )
    for line in failures:
        print(f"  FAIL {line}")
    return failures


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


def home_for(work: Path, registry: Path, model: Path) -> Home:
    """One installed home per registry (sets over the same registry share it); a reused
    home loses its search index, so the next service measures the code as it is."""
    folder = work / registry.name
    home = Home(folder / "home")
    if home.default_lockfile.is_file():
        shutil.rmtree(home.derived_dir / "search-index", ignore_errors=True)
        return home
    shutil.rmtree(folder, ignore_errors=True)
    t = time.perf_counter()
    installer = install_skillmd if registry.name == SKILLMD else install_store
    home = installer(folder, registry, model=model)
    print(f"(installed {registry.name} in {time.perf_counter() - t:.0f}s)", file=sys.stderr)
    return home


def load_queries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def service_for(work: Path, registry: Path, built: dict[str, SkillService]) -> SkillService:
    """The registry's service, its search index rebuilt once per run (so code is measured)."""
    if registry.name not in built:
        home = home_for(work, registry, shared_dir() / "models")
        t = time.perf_counter()
        built[registry.name] = SkillService(
            home, home.default_lockfile, Config(path=home.config_file)
        )
        skills = len(built[registry.name].skills())
        print(f"{registry.name}: {skills} skills, index build {time.perf_counter() - t:.1f}s")
    return built[registry.name]


def run_set(
    work: Path,
    name: str,
    source: tuple[str, str],
    modes: tuple[str, ...],
    opts: set[str],
    built: dict[str, SkillService],
) -> list[tuple]:
    shared = shared_dir()
    queries_file, registry_name = source
    queries = load_queries(shared / queries_file)  # an absolute path stays as it is
    service = service_for(work, shared / registry_name, built)
    print(f"{name}: {Path(queries_file).name}, {len(queries)} queries over {registry_name}")
    rows = []
    for mode in modes:
        rows.append((name, mode, evaluate(service, queries, mode, "-v" in opts)))
        if "--calibrate" in opts and mode in ("bm25", "hybrid"):
            calibrate(service, queries, mode)
    if any(q.get("kind") == "hostile" for q in queries):
        hostile(service, queries, modes)
    print(f"MCP search answer chars, top_k 5 (p50 / p90 / max): {answer_sizes(service, queries)}")
    return rows


def print_table(rows: list[tuple], by_kind: bool) -> None:
    head = "{:<8}{:<10}{:>5}{:>7}{:>7}{:>7}{:>7}{:>9}{:>9}{:>8}"
    print(head.format("set", "mode", "pos", "R@1", "R@5", "MRR", "neg", "hi+@5", "hi+@1", "p50ms"))
    for name, mode, m in rows:
        print(
            f"{name:<8}{mode:<10}{m['positives']:>5}{m['R@1']:>7.3f}{m['R@5']:>7.3f}"
            f"{m['MRR']:>7.3f}{m['neg']:>7}{m['high5']:>9.3f}{m['high1']:>9.3f}{m['p50']:>8.1f}"
        )
    if not by_kind:
        return
    print("per kind (R@1 / R@5 / MRR / high and right@5):")
    for name, mode, m in rows:
        cells = [
            f"{kind} {n} {h1 / n:.2f}/{h5 / n:.2f}/{rr / n:.2f}/{hi / n:.2f}"
            for kind, (n, h1, h5, rr, hi) in sorted(m["kinds"].items())
        ]
        print(f"  {name:<8}{mode:<10}" + "  ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(
        description="Search quality (R@1, R@5, MRR, confidence) on labelled query sets."
    )
    ap.add_argument("--set", dest="which", help=f"one of {', '.join([*SETS, *GROUPS])}, or A,B")
    ap.add_argument("--queries", type=Path, help="any query file of the same format")
    ap.add_argument("--registry", default="ontostore-full", help="folder under ../shared")
    ap.add_argument(
        "--skillmd", action="store_true", help=f"over ../shared/{SKILLMD} (kind skills)"
    )
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--work", type=Path, help="keep (and reuse) the installed homes here")
    ap.add_argument("--by-kind", action="store_true")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("-v", action="store_true", help="print every miss")
    args = ap.parse_args()
    opts = {
        f
        for f, on in (("-v", args.v), ("--calibrate", args.calibrate), ("--by-kind", args.by_kind))
        if on
    }
    sets: dict[str, tuple[str, str]] = {}
    if args.skillmd:
        args.registry = SKILLMD
        args.queries = args.queries or BENCH / "skillmd-dev.jsonl"
    if args.queries is not None:
        path = args.queries.absolute()
        sets[path.stem] = (str(path), args.registry)
    which = args.which if args.which is not None else ("" if sets else "both")
    for name in GROUPS.get(which, tuple(n for n in which.split(",") if n)):
        if name not in SETS:
            ap.error(f"unknown set {name!r}: one of {', '.join([*SETS, *GROUPS])}")
        sets[name] = SETS[name]
    modes = tuple(args.modes.split(","))
    rows: list[tuple] = []
    built: dict[str, SkillService] = {}
    if args.work is not None:
        work = args.work
        work.mkdir(parents=True, exist_ok=True)
        for name, source in sets.items():
            rows += run_set(work, name, source, modes, opts, built)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for name, source in sets.items():
                rows += run_set(Path(tmp), name, source, modes, opts, built)
    print_table(rows, "--by-kind" in opts)


if __name__ == "__main__":
    main()
