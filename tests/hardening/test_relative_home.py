"""Relative `--home`, `--lockfile`, cache and registry paths work for every verb.

The home is normalised once (`paths.Home.resolve`: absolute, `..` folded), and everything
downstream relies on it: the journal records an absolute lockfile (journal.py refuses
anything else), snapshot records must sit under `<home>/ontologies` (snapshot.py), and
`catalog/context.py` turns module paths into `file://` IRIs (`Path.as_uri` raises on a
relative path). So a home typed as `./h` or `x/../h`, from any working directory, must give
exactly what an absolute one gives, through the real CLI and the real MCP server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ontoskills.server.app import TOOL_NAME
from tests.conftest import REPO
from tests.helpers.registry import build_registry, sample_packages

pytestmark = pytest.mark.slow


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(extra or {})}
    for key in ("ONTOSKILLS_HOME", "ONTOSKILLS_LOCKFILE", "ONTOSKILLS_REGISTRY"):
        env.pop(key, None)
    return {**env, **(extra or {})}


def _run(cwd: Path, *args: str, extra: dict[str, str] | None = None) -> dict[str, object]:
    """Run one verb with --json from cwd; returns its document (asserting exit 0)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", "--json", *args],
        cwd=cwd,
        env=_env(extra),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )
    assert proc.returncode == 0, (args, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize("spelling", ["./h", "x/../h", "env:h"])
def test_every_verb_with_a_relative_home(tmp_path: Path, spelling: str) -> None:
    build_registry(tmp_path / "reg", sample_packages())
    work = tmp_path / "work"
    (work / "x").mkdir(parents=True)
    extra = {"ONTOSKILLS_CACHE_DIR": "cache"}  # relative too
    if spelling.startswith("env:"):
        extra["ONTOSKILLS_HOME"] = spelling[4:]
        flags: list[str] = []
    else:
        flags = ["--home", spelling]
    # a relative lockfile with '..' in a sub-folder of the working directory
    flags += ["--lockfile", "x/../project/ontoskills.lock"]
    (work / "project").mkdir()

    def run(*args: str) -> dict[str, object]:
        return _run(work, *flags, *args, extra=extra)

    home = work / "h"
    run("registry", "add", "sample", "../reg")
    run("install", "acme/devtools", "acme/design")
    assert (home / "ontologies/author/acme/devtools/package.json").is_file()
    assert (work / "project/ontoskills.lock").is_file()
    assert not (work / "x/h").exists() and not (work / "x/project").exists()
    packages = run("list")["packages"]
    assert [p["package"] for p in packages] == ["acme/design", "acme/devtools"]  # type: ignore[index]
    assert run("info", "acme/devtools")
    assert run("outdated")
    found = run("search", "debug failing tests")
    assert found["results"][0]["skill"] == "acme/devtools/debugging"  # type: ignore[index]
    shown = run("show", "acme/devtools/debugging")
    assert shown["path"] == str(home / "ontologies/author/acme/devtools/debugging"), shown
    assert shown["dependencies"] == ["planning"] and shown["assets"], shown
    run("disable", "acme/design")
    run("enable", "acme/design")
    # a deleted file is repaired by update, then the whole tree by ci
    (home / "ontologies/author/acme/devtools/debugging/ontoskill.ttl").unlink()
    run("update", "acme/devtools")
    assert (home / "ontologies/author/acme/devtools/debugging/ontoskill.ttl").is_file()
    run("ci")
    assert run("doctor")["healthy"] is True
    # what mcp-config writes names the absolute, normalised home and lockfile
    config = run("mcp-config", "--client", "claude", "--dir", str(work))
    entry = json.loads((work / ".mcp.json").read_text())["mcpServers"]["ontoskills"]
    assert config and entry["args"][:2] == ["--home", str(home)]
    assert entry["args"][2:4] == ["--lockfile", str(work / "project/ontoskills.lock")]
    _serve_from(work, flags, extra)
    run("remove", "acme/design")
    assert not (home / "ontologies/author/acme/design").exists()
    assert not (home / ".staging").exists() or not any((home / ".staging").iterdir())


def _serve_from(cwd: Path, flags: list[str], extra: dict[str, str]) -> None:
    """The real server, started with the same relative paths from cwd: a search and a
    skill's full context (the `file://` IRIs of its modules) both answer."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ontoskills", *flags, "serve"],
        env=_env(extra),
        cwd=str(cwd),
    )

    async def main() -> None:
        async with Client(params) as client:
            found = await client.call_tool(TOOL_NAME, {"q": "write an implementation plan"})
            assert not found.is_error, found
            assert found.structured_content["results"][0]["skill"] == "acme/devtools/planning"
            full = await client.call_tool(TOOL_NAME, {"q": "acme/devtools/planning"})
            assert not full.is_error, full
            assert full.structured_content["kind"] == "skill"

    anyio.run(main)


def test_a_home_made_from_a_relative_path_serves_contexts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An API caller's `Home(Path("h"))` (the server and benchmarks build homes too): the
    context of a skill is read through `file://` IRIs of its modules, which need an absolute
    path (`Path.as_uri` raised ValueError), and a later chdir must not move the home."""
    from ontoskills.config import load_config
    from ontoskills.paths import Cache, Home
    from ontoskills.search.service import SkillService

    build_registry(tmp_path / "reg", sample_packages())
    _run(tmp_path, "--home", "h", "--registry", "reg", "install", "acme/devtools")
    monkeypatch.chdir(tmp_path)
    home = Home(Path("x/../h"))
    assert home.root == tmp_path / "h" and Cache(Path("c")).root == tmp_path / "c"
    service = SkillService(home, home.default_lockfile, load_config(home.config_file))
    monkeypatch.chdir(tmp_path / "reg")  # the service must not depend on the cwd from here
    context = service.context("acme/devtools/planning")
    assert context.record.root == str(tmp_path / "h/ontologies/author/acme/devtools")
    answer = service.skill_answer("acme/devtools/planning")
    assert "planning" in json.dumps(answer.__dict__, default=str)
