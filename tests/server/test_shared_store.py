"""On an install of ../shared/ontostore with the real encoder: the `ontoskill` tool answers the
dev queries exactly as `SkillService` does, in every mode (skipped without ../shared)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ontoskills.config import load_config
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
from tests.conftest import CliRunner, shared_path
from tests.server.rawclient import RawServer


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


pytestmark = pytest.mark.shared


def test_tool_matches_the_service_on_dev_queries_in_every_mode(
    cli: CliRunner, env: dict[str, str], serve_env: dict[str, str], ontostore: Path
) -> None:
    models = shared_path("models", "model.onnx").parent
    ids = [e["package_id"] for e in json.loads((ontostore / "index.json").read_text())["packages"]]
    cli("--registry", str(ontostore), "install", *ids, "--model", str(models), check=True)
    cli("enable", *ids, check=True)
    lines = shared_path("queries-dev.jsonl").read_text().splitlines()
    queries: list[dict[str, Any]] = [json.loads(x) for x in lines if x.strip()]
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    service = SkillService(home, home.default_lockfile, load_config(home.config_file))

    recall: dict[str, float] = {}
    for mode in ("bm25", "semantic", "hybrid"):
        hits = 0
        with RawServer(serve_env, "serve", "--mode", mode) as raw:
            raw.initialize("2025-11-25")
            for n, item in enumerate(queries):
                reply = raw.request(
                    "tools/call", {"name": "ontoskill", "arguments": {"q": item["q"], "top_k": 5}}
                )
                got = reply["result"]["structuredContent"]
                key = service.resolve(item["q"])
                if key is not None:
                    assert got["kind"] == "skill", (mode, n, item["q"])
                    top = [key]
                else:
                    want = service.search(item["q"], top_k=5, mode=mode)
                    assert [(r["skill"], r["score"]) for r in got["results"]] == [
                        (r.skill, round(r.score, 3)) for r in want.results
                    ], (mode, n, item["q"])
                    assert (got["mode"], got["confidence"]) == (mode, want.confidence)
                    top = [r["skill"] for r in got["results"]]
                hits += any(e in top for e in item["expect"])
            assert raw.close() == 0
        recall[mode] = hits / len(queries)
    print("tool Recall@5 on dev queries:", recall)
    assert recall["hybrid"] >= 0.9, recall
