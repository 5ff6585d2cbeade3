"""The official MCP Inspector CLI (npm, pinned in tests/server/inspector/package.json) as an
independent client of `ontoskills serve`, including its SEP-2640 skills conformance check.

Skipped when node/npm are absent or the package cannot be installed (offline).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

NODE_DIR = Path(__file__).parent / "inspector"


@pytest.fixture(scope="module")
def inspector() -> Path:
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node/npm not installed")
    binary = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        # --ignore-scripts: the CLI needs no postinstall step, and tests run no foreign hooks.
        proc = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0 or not binary.exists():
            pytest.skip(f"cannot install the MCP Inspector: {proc.stderr[-300:]}")
    return binary


def run_inspector(
    inspector: Path, home: Path, *args: str, extra: tuple[str, ...] = ()
) -> tuple[int, Any]:
    cmd = [
        str(inspector), "--cli",
        "-e", f"PYTHONPATH={REPO}", "-e", f"ONTOSKILLS_HOME={home}", "-e", "NO_COLOR=1",
        sys.executable, "-m", "ontoskills", "serve", *extra, *args,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    lines = [x for x in proc.stdout.splitlines() if x.strip()]
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = [json.loads(x) for x in lines]
    return proc.returncode, doc


def test_inspector_tools_and_calls(inspector: Path, installed: Path) -> None:
    rc, doc = run_inspector(inspector, installed, "--method", "tools/list")
    assert rc == 0, doc
    (tool,) = doc["tools"]
    assert tool["name"] == "ontoskill"
    assert tool["inputSchema"]["properties"]["top_k"]["maximum"] == 50

    rc, doc = run_inspector(
        inspector, installed, "--method", "tools/call", "--tool-name", "ontoskill",
        "--tool-arg", "q=find the root cause of a bug", "--tool-arg", "top_k=2",
    )  # fmt: skip
    assert rc == 0, doc
    assert doc["structuredContent"]["results"][0]["skill"] == "acme/devtools/debugging"

    rc, doc = run_inspector(
        inspector, installed, "--method", "tools/call", "--tool-name", "ontoskill",
        "--tool-arg", "q=acme/devtools/debugging",
    )  # fmt: skip
    assert rc == 0 and doc["structuredContent"]["kind"] == "skill"

    rc, doc = run_inspector(
        inspector, installed, "--method", "tools/call", "--tool-name", "ontoskill",
        "--tool-arg", "q=x", "--tool-arg", "top_k=0",
    )  # fmt: skip
    assert rc != 0
    assert doc["isError"] is True, doc


def test_inspector_resources_and_skills_conformance(inspector: Path, installed: Path) -> None:
    rc, doc = run_inspector(
        inspector, installed, "--method", "resources/read", "--uri", "ontology://schema"
    )
    assert rc == 0, doc
    assert len(doc["contents"][0]["text"].encode()) < 4096

    rc, reports = run_inspector(inspector, installed, "--method", "skills/list", "--verify")
    assert rc == 0, reports
    reports = reports if isinstance(reports, list) else [reports]
    assert {r["name"] for r in reports} >= {"debugging", "planning", "reviewing", "colorize"}
    assert all(r["ok"] for r in reports)
