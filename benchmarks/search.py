"""Search speed and memory: query latency p50/p99 (measured in-process, as the server sees
it), cold start to first answer, peak RSS, index build time.

    python benchmarks/search.py [--sizes 1000,10000] [--queries N] [--no-full]

Catalogs: the shared OntoStore subset (51 skills, stored vectors + real model), the full
registry (../shared/ontostore-full: 626 skills, every one enabled, real model) and synthetic
registries of N skills (text sampled from the OntoStore vocabulary) installed through the
real install pipeline, without a model in the home (so the build does not encode 3N
intents); their semantic row ranks random unit intent vectors (3 per skill) with the real
query encoder, which costs the same per query as real vectors.
Cold start and RSS are measured in a fresh subprocess (interpreter start excluded from
"cold", included in "wall").
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _store import REPO, install_store, shared_dir

from ontoskills.catalog.model import CatalogData
from ontoskills.config import Config
from ontoskills.embeddings.encoder import Encoder
from ontoskills.paths import Home
from ontoskills.search.bm25 import BM25Index
from ontoskills.search.ranking import Ranker
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize

QUERIES = [
    "my tests keep failing and I can't figure out why",
    "write an implementation plan",
    "send usdc to a friend",
    "make the landing page bolder",
    "extract key frames from a video",
    "review my pull request",
    "browser automation",
    "optimal power flow",
]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()


def peak_mb():
    # VmHWM, not ru_maxrss: the latter keeps the forking parent's peak across exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


sys.path.insert(0, sys.argv[1])
from ontoskills.config import Config
from ontoskills.embeddings.encoder import Encoder
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
home = Home(__import__("pathlib").Path(sys.argv[2]))
# bm25 mode never loads the (lazy) encoder, so the same snapshot serves both children.
svc = SkillService(home, home.default_lockfile, Config(path=home.config_file))
resp = svc.search("write an implementation plan", mode=sys.argv[3])
t1 = time.perf_counter()
rss = peak_mb()
extra = None
if len(sys.argv) > 4:
    import mcp.server  # noqa: F401  what the MCP SDK adds on top
    extra = peak_mb()
print(json.dumps({"cold_s": t1 - t0, "rss_mb": rss, "rss_with_mcp_mb": extra,
                  "skills": len(svc.skills())}))
"""


def child(home: Path, mode: str, with_mcp: bool = False) -> dict:
    start = time.perf_counter()
    args = [sys.executable, "-c", CHILD, str(REPO), str(home), mode] + (["mcp"] if with_mcp else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    doc["wall_s"] = time.perf_counter() - start
    return doc


def latency(fn, n: int) -> tuple[float, float]:
    times = []
    for i in range(n):
        q = QUERIES[i % len(QUERIES)]
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 99))


def synthetic_registry(root: Path, n_skills: int, vocab: list[str], seed: int = 7) -> Path:
    sys.path.insert(0, str(REPO))
    from tests.helpers.registry import PackageSpec, SkillSpec, build_registry

    rng = random.Random(seed)
    per_pkg = 50
    packages = []
    for p in range(0, n_skills, per_pkg):
        skills = []
        for s in range(p, min(p + per_pkg, n_skills)):
            sid = "-".join(rng.sample(vocab, 2)) + f"-{s}"
            skills.append(
                SkillSpec(
                    sid,
                    " ".join(rng.choices(vocab, k=14)),
                    intents=tuple(" ".join(rng.choices(vocab, k=5)) for _ in range(3)),
                    vectors=False,
                )
            )
        tier = rng.choice(["official", "verified", "community"])
        packages.append(PackageSpec(id=f"synth{p // per_pkg}/pkg", skills=skills, trust_tier=tier))
    return build_registry(root, packages)


def store_vocab(store: Path) -> list[str]:
    words: set[str] = set()
    for manifest in store.glob("packages/*/*/package.json"):
        for s in json.loads(manifest.read_text())["skills"]:
            text = s.get("description", "") + " " + " ".join(s.get("intents", []))
            words.update(w for w in text.lower().split() if w.isalpha() and len(w) > 2)
    return sorted(words)


def measure(label: str, home: Home, n_queries: int, rows: list, model: Path | None = None) -> None:
    config = Config(path=home.config_file)
    t = time.perf_counter()
    svc = SkillService(home, home.default_lockfile, config, verify="full")
    build = time.perf_counter() - t  # first start: verify + parse + (encode) + snapshot
    bm = latency(lambda q: svc.search(q, mode="bm25"), n_queries)
    sem: tuple[float, float] | None = None
    if svc.semantic_available():
        sem = latency(lambda q: svc.search(q, mode="semantic"), n_queries)
        hyb = latency(lambda q: svc.search(q, mode="hybrid"), n_queries)
    elif model is not None and (model / "model.onnx").is_file():
        data = svc.state.data
        n = len(data.records)
        rng = np.random.default_rng(0)
        vecs = rng.standard_normal((n * 3, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        fake = CatalogData(
            data.records,
            vecs,
            np.repeat(np.arange(n, dtype=np.int32), 3),
            ["intent"] * (n * 3),
            "random",
            [],
            {},
        )
        ranker = Ranker(fake, BM25Index, config.search.trust_weights)
        enc = Encoder(model / "model.onnx", model / "tokenizer.json")

        def run(q: str, mode: str) -> None:
            ranker.rank(tokenize(q), enc.encode_one(q), mode, -1, 5, None)

        sem = latency(lambda q: run(q, "semantic"), n_queries)
        hyb = latency(lambda q: run(q, "hybrid"), n_queries)
    cold_bm25 = child(home.root, "bm25", with_mcp=True)
    cold_auto = child(home.root, "auto")
    rows.append(
        (label, cold_bm25["skills"], build, bm, sem, hyb if sem else None, cold_bm25, cold_auto)
    )


def main() -> None:
    sizes = [1000, 10000]
    n_queries = 400
    argv = sys.argv[1:]
    if "--sizes" in argv:
        sizes = [int(x) for x in argv[argv.index("--sizes") + 1].split(",") if x]
    if "--queries" in argv:
        n_queries = int(argv[argv.index("--queries") + 1])
    shared = shared_dir()
    store, model = shared / "ontostore", shared / "models"
    rows: list = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = install_store(work / "store", store, model=model)
        measure("ontostore", home, n_queries, rows)
        full = shared / "ontostore-full"
        if "--no-full" not in argv and (full / "index.json").is_file():
            home = install_store(work / "full", full, model=model)
            measure("ontostore-full", home, n_queries, rows)
        vocab = store_vocab(store)
        for n in sizes:
            reg = synthetic_registry(work / f"reg{n}", n, vocab)
            t = time.perf_counter()
            h = install_store(work / f"s{n}", reg, model=None)
            print(
                f"(installed {n} synthetic skills in {time.perf_counter() - t:.1f}s)",
                file=sys.stderr,
            )
            measure(f"synthetic {n}", h, n_queries, rows, model)
    fmt = "{:<16}{:>7}{:>9}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>9}{:>9}{:>8}{:>8}{:>8}"
    print(
        fmt.format(
            "catalog",
            "skills",
            "build s",
            "bm25 p50",
            "bm25 p99",
            "sem p50",
            "sem p99",
            "hyb p50",
            "hyb p99",
            "cold s",
            "cold+m s",
            "RSS MB",
            "+mcp MB",
            "+m MB",
        )
    )
    for label, n, build, bm, sem, hyb, c_bm, c_auto in rows:

        def f(v: float | None, d: int = 2) -> str:
            return "-" if v is None else f"{v:.{d}f}"

        print(
            fmt.format(
                label,
                n,
                f(build),
                f(bm[0], 3),
                f(bm[1], 3),
                f(sem[0] if sem else None),
                f(sem[1] if sem else None),
                f(hyb[0] if hyb else None),
                f(hyb[1] if hyb else None),
                f(c_bm["cold_s"]),
                f(c_auto["cold_s"]),
                f(c_bm["rss_mb"], 0),
                f(c_bm["rss_with_mcp_mb"], 0),
                f(c_auto["rss_mb"], 0),
            )
        )
    print(
        "\nbuild = first start (verify full, parse Turtle, encode missing vectors, snapshot);"
        "\np50/p99 in ms, measured in-process; cold = fresh process to first answer from the"
        "\nsnapshot, imports included (cold+m: auto mode, loading the model); RSS = peak RSS"
        "\nwithout the model, +mcp = after `import mcp.server` too, +m = with the model loaded"
        "\n(synthetic homes have no model: auto = bm25 there)."
    )


if __name__ == "__main__":
    main()
