"""`ontoskills serve` under load with concurrent installs (issue 7 item 4).

Several SDK stdio client tasks make thousands of `ontoskill` calls (searches, skill-id
lookups, a probe for the package being churned) while a thread runs the real CLI against the
same home: install, disable, enable, update (to a version the registry just published),
remove, over and over. Every stdout line of the server is recorded through a relay
(tests/helpers/stdout_tap.py) and checked to be JSON-RPC.

    python benchmarks/serve_load.py [--calls 5000] [--clients 8] [--filler 40]

The home holds synthetic packages (tests/helpers/registry.py): the two sample packages, the
churned `zeta/pdfkit`, and --filler extra packages of 3 skills each.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _store import cli_install  # noqa: E402

from tests.helpers.registry import (  # noqa: E402 - needs the repo on sys.path
    PackageSpec,
    SkillSpec,
    build_registry,
    sample_packages,
)
from tests.helpers.serve_load import DROPPED, moving_package, run_load  # noqa: E402


def filler(n: int) -> list[PackageSpec]:
    topics = ["parse logs", "write sql", "deploy a container", "resize images", "lint yaml"]
    return [
        PackageSpec(
            id=f"fill{i:03d}/kit",
            version="1.0.0",
            trust_tier="community",
            skills=[
                SkillSpec(
                    f"task-{j}",
                    f"{topics[(i + j) % 5]} variant {i}-{j}",
                    intents=(f"{topics[(i + j) % 5]} {i}",),
                )
                for j in range(3)
            ],
        )
        for i in range(n)
    ]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--filler", type=int, default=40)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fill = filler(args.filler)
        registry = build_registry(root / "reg", [*sample_packages(), moving_package(), *fill])
        home = root / "home"
        cli_install(registry, home, ["acme/devtools", DROPPED, *(p.id for p in fill)])
        queries = [
            "debug failing tests",
            "review code",
            "add color",
            "write sql 7",
            "deploy a container",
            "resize images for the web",
            "plan the work",
        ]
        lookups = ["acme/devtools/planning", "acme/devtools/debugging", "fill001/kit/task-1"]
        t = time.perf_counter()
        res = run_load(
            home,
            registry,
            calls=args.calls,
            clients=args.clients,
            queries=queries,
            lookups=lookups,
            serve_args=("--mode", "bm25"),
            workdir=root,
        )
        elapsed = time.perf_counter() - t

    rows = [
        ("skills installed (before churn)", f"{3 + 1 + 3 * args.filler}"),
        ("client tasks (one SDK stdio session)", str(args.clients)),
        ("calls made", f"{res.calls} in {elapsed:.1f} s ({res.calls / elapsed:.0f} calls/s)"),
        ("error responses (isError)", str(res.error_results)),
        ("protocol errors", str(res.protocol_errors)),
        ("malformed results", str(res.malformed)),
        ("stdout lines / non-JSON-RPC", f"{res.stdout_lines} / {res.non_jsonrpc_lines}"),
        (
            "round-trip p50 / p99",
            f"{pct(res.latencies_ms, 0.5):.1f} / {pct(res.latencies_ms, 0.99):.1f} ms",
        ),
        (
            "server RSS start / middle / end / max",
            " / ".join(
                f"{res.rss_kb.get(k, 0) / 1024:.1f}" for k in ("start", "middle", "end", "max")
            )
            + " MB",
        ),
        ("CLI runs (ok)", ", ".join(f"{k} {v}" for k, v in sorted(res.ops.items()))),
        ("CLI failures", str(len(res.op_failures))),
        ("reloads observed by clients", str(res.reloads_observed)),
        (
            "final tree served (installed found, removed gone)",
            str(res.final_probe_top == "zeta/pdfkit/pdf-forms" and not res.final_dropped_served),
        ),
        ("server alive at the end", str(res.server_alive)),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"| {'metric'.ljust(width)} | value |\n|{'-' * (width + 2)}|-------|")
    for k, v in rows:
        print(f"| {k.ljust(width)} | {v} |")
    trend = [f"{kb / 1024:.1f}" for kb in res.rss_samples[:: max(1, len(res.rss_samples) // 12)]]
    print("RSS every ~1/12 of the run (MB):", " ".join(trend), file=sys.stderr)
    for line in res.samples[:5] + res.op_failures[:5]:
        print("  sample:", line, file=sys.stderr)


if __name__ == "__main__":
    main()
