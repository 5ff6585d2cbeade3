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


@pytest.mark.slow
def test_host_walk_over_the_full_registry(cli: CliRunner, env: dict[str, str]) -> None:
    """Every byte of every skill of ../shared/ontostore-full (626 skills), read and verified
    the way a Skills-extension host must: digests, sizes, frontmatter, names, limits."""
    import anyio
    from mcp import Client

    from ontoskills.server.app import ServeOptions, ServiceHolder, build_server
    from tests.helpers.skillhost import sdk_request, walk_all

    store = shared_path("ontostore-full", "index.json").parent
    ids = [e["package_id"] for e in json.loads((store / "index.json").read_text())["packages"]]
    cli("--registry", str(store), "install", *ids, "--quiet", check=True, timeout=900)
    cli("enable", *ids, "--quiet", check=True, timeout=600)
    home = Home(Path(env["ONTOSKILLS_HOME"]))

    async def main() -> Any:
        holder = ServiceHolder(
            lambda: SkillService(home, home.default_lockfile, load_config(home.config_file))
        )
        server = build_server(holder, ServeOptions())
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            async with Client(server, mode="legacy") as client:
                walk = await walk_all(sdk_request(client))
            tg.cancel_scope.cancel()
        return walk

    walk = anyio.run(main)
    assert walk.problems == []
    assert walk.skills == 626 and walk.files > 626
    renamed = {
        uri: e["frontmatter"]["metadata"]["original-name"]
        for uri, e in walk.entries.items()
        if "original-name" in e["frontmatter"]["metadata"]
    }
    assert sorted(renamed.values()) == [
        "dialogue_graph",
        "image_editing",
        "object_counter",
        "reflow_machine_maintenance_guidance",
    ]
