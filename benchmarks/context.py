"""Skill context sized for a model (issue 12, item 6), over every skill of a registry
(default ../shared/ontostore-full, every package installed and every skill enabled).

For each skill, the `ontoskill` answer to its id and to every page of every part, built by
the server's own `run_tool` and measured as the MCP client receives it: text + compact JSON
of structuredContent. Next to them, the answer shape before this change (the full context as
text plus a structured copy of it). Also parts per skill, the time to build an overview
(Turtle parse, split, overview) and whether walking the parts reaches every piece of content
`show --json` has.

    python benchmarks/context.py [--registry DIR] [--budget N] [--work DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _store import install_store, shared_dir  # also puts the repository on sys.path

from ontoskills.catalog.context import load_context
from ontoskills.catalog.disclosure import Disclosure, json_chars
from ontoskills.config import DEFAULT_CONTEXT_BUDGET, load_config
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
from ontoskills.server.app import ServeOptions, run_tool
from tests.helpers.context import walk


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def row(name: str, values: list[float], fmt: str = "{:,.0f}") -> str:
    cells = [fmt.format(pct(values, p)) for p in (0.5, 0.9, 0.99)] + [fmt.format(max(values))]
    return f"| {name} | " + " | ".join(cells) + " |"


def measure(home: Path, budget: int, limit: int | None) -> None:
    h = Home(home)
    svc = SkillService(h, h.default_lockfile, load_config(h.config_file), verify="none")
    options = ServeOptions(context_budget=budget)
    keys = [s.key for s in svc.skills()][:limit]

    def size(text: str, data: dict[str, Any]) -> int:
        return len(text) + json_chars(data)

    async def call(q: str) -> tuple[str, dict[str, Any], bool]:
        result = run_tool(svc, q, 5, options)
        text = "".join(c.text for c in result.content if c.type == "text")
        return text, result.structured_content or {}, bool(result.is_error)

    before: dict[str, list[float]] = {"text": [], "total": []}
    overview: list[float] = []
    pages: list[float] = []
    parts: list[float] = []
    complete = 0
    t_parse: list[float] = []
    t_split: list[float] = []
    t_over: list[float] = []
    missing: list[tuple[str, str]] = []
    for key in keys:
        record = svc.record(key)
        t0 = time.perf_counter()
        ctx = load_context(record)
        t1 = time.perf_counter()
        made = Disclosure(ctx, budget)
        t2 = time.perf_counter()
        made.overview()
        t3 = time.perf_counter()
        t_parse.append((t1 - t0) * 1000)
        t_split.append((t2 - t1) * 1000)
        t_over.append((t3 - t2) * 1000)
        text, data = ctx.render(), {"kind": "skill", **ctx.to_json()}
        before["text"].append(len(text))
        before["total"].append(len(text) + json_chars(data))

        seen = anyio.run(walk, call, key, size)
        overview.append(seen.sizes[0])
        pages.extend(seen.sizes[1:])
        parts.append(len(seen.parts))
        complete += bool(seen.overview_structured.get("complete"))
        doc = ctx.to_json()
        lost = seen.missing(doc)
        missing.extend((key, f[:80]) for f in lost)

    n = len(keys)
    print(f"\n{n} skills, budget {budget:,} chars (text + structuredContent JSON)\n")
    print("| answer (chars) | p50 | p90 | p99 | max |")
    print("|---|---|---|---|---|")
    print(row("full context as one answer: text", before["text"]))
    print(row("full context as one answer: + JSON copy", before["total"]))
    print(row("**overview** (skill id)", overview))
    print(row(f"**part page** ({len(pages):,} pages)", pages))
    over = sum(v > budget for v in [*overview, *pages])
    fit_before = sum(v <= budget for v in before["total"])
    print(f"\nanswers over budget: {over} (full context as one answer: {n - fit_before} of {n})")
    print(f"skills answered whole (complete overview): {complete} of {n}")
    print("\n| per skill | p50 | p90 | p99 | max |")
    print("|---|---|---|---|---|")
    print(row("parts", parts))
    print(row("Turtle parse ms (cold)", t_parse, "{:.1f}"))
    print(row("split into parts ms", t_split, "{:.1f}"))
    print(row("overview ms", t_over, "{:.2f}"))
    print(
        row(
            "cold overview ms (sum)",
            [a + b + c for a, b, c in zip(t_parse, t_split, t_over, strict=True)],
            "{:.1f}",
        )
    )
    print(
        f"\nmean parse/split/overview ms: {statistics.mean(t_parse):.1f} / "
        f"{statistics.mean(t_split):.1f} / {statistics.mean(t_over):.2f}"
    )
    print(f"content pieces not reached by walking the parts: {len(missing)}")
    for key, frag in missing[:10]:
        print(f"  {key}: {frag!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", type=Path, default=shared_dir() / "ontostore-full")
    ap.add_argument("--budget", type=int, default=DEFAULT_CONTEXT_BUDGET)
    ap.add_argument("--work", type=Path, help="reuse an install made here (else a temp dir)")
    ap.add_argument("--limit", type=int, help="only the first N skills (a quick look)")
    args = ap.parse_args()
    if not (args.registry / "index.json").is_file():
        sys.exit(f"no registry at {args.registry} (set ONTOSKILLS_SHARED or pass --registry)")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        home = work / "home"
        if not (home / "ontoskills.lock").exists():
            t = time.perf_counter()
            install_store(work, args.registry, model=None)
            print(f"installed {args.registry} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        measure(home, args.budget, args.limit)


if __name__ == "__main__":
    main()
