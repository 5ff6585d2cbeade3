"""Embeddings: encoder latency and throughput, install --with-embeddings cold/warm, export.

    python benchmarks/embeddings.py [SHARED_DIR]     # default: ../shared (models/, ontostore/)

Targets: single-query encode p50/p99 <= 5 ms. The install runs against the registry over
loopback HTTP with the model from a fake hub (tests/helpers/fakehub.py) through the real
huggingface_hub code; "warm" is a fresh home with the download and HF caches kept.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from install import serve  # noqa: E402
from pytest_httpserver import HTTPServer  # noqa: E402

from ontoskills.config import Config  # noqa: E402
from ontoskills.embeddings import hub  # noqa: E402
from ontoskills.embeddings.encoder import Encoder  # noqa: E402
from ontoskills.embeddings.export import export_tree  # noqa: E402
from ontoskills.embeddings.vectors import read_modules  # noqa: E402
from ontoskills.install.operations import install  # noqa: E402
from ontoskills.install.options import InstallOptions  # noqa: E402
from ontoskills.install.session import Session  # noqa: E402
from ontoskills.paths import Cache, Home  # noqa: E402
from ontoskills.sources import SourceOptions  # noqa: E402
from tests.helpers.fakehub import FakeHub  # noqa: E402

HUB_MAP = {"onnx/model.onnx": "model.onnx", "tokenizer.json": "tokenizer.json"}


def queries(shared: Path, intents: list[str]) -> list[str]:
    path = shared / "queries-dev.jsonl"
    if path.is_file():
        return [json.loads(line)["q"] for line in path.read_text().splitlines() if line.strip()]
    return intents


def encode_latency(enc: Encoder, texts: list[str], rounds: int = 3) -> tuple[float, float]:
    enc.encode_one("warm up")
    times = []
    for _ in range(rounds):
        for t in texts:
            start = time.perf_counter()
            enc.encode_one(t)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def run_install(url: str, work: Path, tag: str, cache: str) -> float:
    home = Home(work / f"home-{tag}")
    session = Session(
        home=home,
        cache=Cache(work / f"cache-{cache}"),
        config=Config(path=home.config_file),
        lockfile_path=home.default_lockfile,
        options=SourceOptions(cache=Cache(work / f"cache-{cache}")),
        registry_override=url,
    )
    start = time.perf_counter()
    install(session, ["obra/superpowers"], InstallOptions(with_embeddings=True))
    return time.perf_counter() - start


def main() -> None:
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared"
    models, store = shared / "models", shared / "ontostore"
    if not (models / "model.onnx").is_file() or not (store / "index.json").is_file():
        sys.exit(f"needs {models}/model.onnx and {store}/index.json")
    rows: list[tuple[str, str, str]] = []

    enc = Encoder(models / "model.onnx", models / "tokenizer.json")
    start = time.perf_counter()
    enc.encode_one("load")
    rows.append(
        ("encoder load (ONNX session)", f"{(time.perf_counter() - start) * 1000:.0f}", "ms")
    )
    intents = [i for m in read_modules(store / "packages") for i in m.intents]
    p50, p99 = encode_latency(enc, queries(shared, intents))
    rows.append(("single query encode p50", f"{p50:.2f}", "ms (target <= 5)"))
    rows.append(("single query encode p99", f"{p99:.2f}", "ms (target <= 5)"))
    start = time.perf_counter()
    enc.encode(intents, batch_size=32)
    secs = time.perf_counter() - start
    rows.append(
        (f"batch encode ({len(intents)} intents)", f"{len(intents) / secs:.0f}", "intents/s")
    )

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HF_HOME"] = str(work / "hf")
        server = HTTPServer(host="127.0.0.1")
        server.start()
        fake = FakeHub(server, commit=hub.DEFAULT_REVISION).add_folder(models, HUB_MAP).install()
        os.environ["HF_ENDPOINT"] = fake.endpoint
        url, http_server = serve(store)
        try:
            cold = run_install(url, work, "cold", "a")
            warm = run_install(url, work, "warm", "a")
        finally:
            http_server.terminate()  # install.serve runs the registry in its own process
            server.stop()
        rows.append(("install --with-embeddings obra/superpowers cold", f"{cold:.2f}", "s"))
        rows.append(("  same, warm caches (fresh home)", f"{warm:.2f}", "s"))
        start = time.perf_counter()
        res = export_tree(
            store / "packages",
            work / "export",
            config=Config(path=work / "c.toml"),
            model_path=str(models),
        )
        secs = time.perf_counter() - start
        rows.append(
            (
                f"export-embeddings ontostore ({res.modules} modules, {res.intents} intents)",
                f"{secs:.2f}",
                "s",
            )
        )
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'measure':<{width}}{'value':>10}  unit")
    for name, value, unit in rows:
        print(f"{name:<{width}}{value:>10}  {unit}")


if __name__ == "__main__":
    main()
