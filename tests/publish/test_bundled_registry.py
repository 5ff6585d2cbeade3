"""The committed registry/ is exactly what scripts/build-registry.sh builds, verifies clean,
and installs offline (the README quickstart)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills import lockfile
from tests.conftest import REPO, CliRunner


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


REGISTRY = REPO / "registry"


def _snapshot(root: Path) -> dict[str, tuple[bytes, bool]]:
    out = {"index.json": ((root / "index.json").read_bytes(), False)}
    for p in sorted((root / "packages").rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), bool(p.stat().st_mode & 0o100))
    return out


def test_committed_registry_is_what_the_build_script_produces(tmp_path: Path) -> None:
    out = tmp_path / "built"
    proc = subprocess.run(
        ["sh", str(REPO / "scripts" / "build-registry.sh"), str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert _snapshot(out) == _snapshot(REGISTRY), "run scripts/build-registry.sh and commit"


def test_bundled_registry_verifies_clean_with_official_packages(cli: CliRunner) -> None:
    proc = cli("registry", "verify", str(REGISTRY), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["summary"]["errors"] == 0 and doc["summary"]["warnings"] == 0
    assert doc["summary"]["packages"] >= 2 and doc["summary"]["files_checked"] > 0
    index = json.loads((REGISTRY / "index.json").read_text())
    tiers = {e["package_id"]: e["trust_tier"] for e in index["packages"]}
    assert tiers["ontoskills/using-ontoskills"] == "official"
    assert tiers["ontoskills/publishing-skills"] == "official"
    for e in index["packages"]:
        manifest = json.loads((REGISTRY / e["manifest_path"]).read_text())
        assert manifest["files"], "every bundled package carries hashes"


def test_quickstart_installs_offline(cli: CliRunner, env: dict[str, str]) -> None:
    proc = cli("--offline", "--registry", str(REGISTRY), "install", "ontoskills/using-ontoskills")
    assert proc.returncode == 0, proc.stderr
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    pkg = lock.packages["ontoskills/using-ontoskills"]
    # The index says official, but a --registry that `registry add` never configured is capped
    # at community (issue 13 class 9, docs/CLI.md "Trust of a registry"): a one-off index must
    # not label itself official. Configured with --trust, the index's tier is kept.
    assert pkg.trust_tier == "community"
    cli("registry", "add", "bundled", str(REGISTRY), "--trust", "official", check=True)
    cli("--offline", "--registry", "bundled", "update", check=True)
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    assert lock.packages["ontoskills/using-ontoskills"].trust_tier == "official"
    assert set(pkg.skills) == {
        "installing-packages",
        "pinning-with-lockfile",
        "searching-skills",
        "troubleshooting",
    }


@pytest.mark.skipif(
    importlib.util.find_spec("ontoskills.commands.search") is None, reason="needs `search`"
)
def test_quickstart_search_ranks_the_lockfile_skill_first(cli: CliRunner) -> None:
    cli(
        "--offline",
        "--registry",
        str(REGISTRY),
        "install",
        "ontoskills/using-ontoskills",
        check=True,
    )
    proc = cli("search", "pin my skills in CI with a lockfile", "--json", check=True)
    doc = json.loads(proc.stdout)
    results = doc.get("results", [])
    assert results, proc.stdout
    assert results[0]["skill"] == "ontoskills/using-ontoskills/pinning-with-lockfile"
