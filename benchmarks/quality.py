"""Search quality: Recall@1, Recall@5 and MRR per mode on a labelled query file.

    python benchmarks/quality.py [QUERIES.jsonl] [REGISTRY_DIR] [-v]
    # defaults: ../shared/queries-dev.jsonl over ../shared/ontostore, model ../shared/models

Every package of the registry is installed (with its stored vectors) into a temp home and all
skills are enabled. "semantic (stored)" uses only published vectors (no model-derived ones),
the reference implementation's setting; the other semantic modes also encode the intents of
modules that ship without vectors.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _store import install_store, shared_dir

from ontoskills.config import Config
from ontoskills.search.service import SkillService


def evaluate(service: SkillService, queries: list[dict], mode: str, verbose: bool) -> dict:
    r1 = r5 = rr = 0.0
    start = time.perf_counter()
    for q in queries:
        resp = service.search(q["q"], top_k=10, mode=mode)
        keys = [r.skill for r in resp.results]
        rank = next((n for n, k in enumerate(keys, 1) if k in q["expect"]), None)
        r1 += rank == 1
        r5 += rank is not None and rank <= 5
        rr += 1 / rank if rank else 0.0
        if verbose and rank != 1:
            print(f"  [{mode}] rank {rank}: {q['q']!r} -> {keys[:3]} (want {q['expect']})")
    n = len(queries)
    return {
        "R@1": r1 / n,
        "R@5": r5 / n,
        "MRR": rr / n,
        "ms/query": (time.perf_counter() - start) * 1000 / n,
    }


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    shared = shared_dir()
    queries_path = Path(args[0]) if args else shared / "queries-dev.jsonl"
    registry = Path(args[1]) if len(args) > 1 else shared / "ontostore"
    model = shared / "models"
    queries = [json.loads(line) for line in queries_path.read_text().splitlines() if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = install_store(Path(tmp), registry, model=model)
        config = Config(path=home.config_file)
        full = SkillService(home, home.default_lockfile, config)
        stored_home = install_store(Path(tmp) / "stored", registry, model=model)
        # Stored vectors only: drop the install's derived vectors and build the index without
        # an encoder (so none are derived either), then query with the model.
        shutil.rmtree(stored_home.derived_dir / "vectors", ignore_errors=True)
        stored = SkillService(
            stored_home, stored_home.default_lockfile, config, encoder_factory=lambda: None
        )
        stored._factory = full.encoder  # type: ignore[method-assign]
        stored._encoder_loaded = False
        for label, svc, mode in (
            ("bm25", full, "bm25"),
            ("semantic (stored)", stored, "semantic"),
            ("semantic", full, "semantic"),
            ("hybrid", full, "hybrid"),
            ("auto", full, "auto"),
        ):
            rows.append((label, evaluate(svc, queries, mode, verbose)))
        skills = len(full.skills())
    print(f"{len(queries)} queries from {queries_path.name}, {skills} skills from {registry}")
    print(f"{'mode':<20}{'R@1':>7}{'R@5':>7}{'MRR':>7}{'ms/q':>8}")
    for label, m in rows:
        print(f"{label:<20}{m['R@1']:>7.3f}{m['R@5']:>7.3f}{m['MRR']:>7.3f}{m['ms/query']:>8.2f}")


if __name__ == "__main__":
    main()
