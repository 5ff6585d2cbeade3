"""Issue 24's "Also" list: what a new user trying the CLI tripped over. Each test runs the
real CLI entry (in-process: same parsing, contexts and renderers as the console script) over
a synthetic registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages

LONG_ID = "skillsbench/citation-checker-with-a-name-too-long-for-one-terminal-row"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


def long_registry(root: Path, version: str = "1.0.0") -> Path:
    skill = SkillSpec("checking-citations-in-a-long-paper", "Check citations")
    return build_registry(root, [PackageSpec(id=LONG_ID, skills=[skill], version=version)])


# 1. a table that is not going to a terminal is never cut -----------------------------------
def test_piped_list_and_outdated_keep_whole_ids(cli_inproc: CliRunner, tmp_path: Path) -> None:
    reg = long_registry(tmp_path / "reg")
    cli_inproc("--registry", str(reg), "install", LONG_ID, check=True)
    listed = cli_inproc("list", check=True)
    assert LONG_ID in listed.stdout and "…" not in listed.stdout
    long_registry(tmp_path / "reg", version="2.0.0")  # the registry moved on
    stale = cli_inproc("outdated", check=True)
    assert LONG_ID in stale.stdout and "…" not in stale.stdout
    assert "2.0.0" in stale.stdout


# 2. the first search that builds the index says so ------------------------------------------
def test_first_search_says_it_builds_the_index(
    cli_inproc: CliRunner, registry: Path, env: dict[str, str]
) -> None:
    cli_inproc("--registry", str(registry), "install", "acme/devtools", "acme/design", check=True)
    first = cli_inproc("search", "debugging", check=True)
    assert "building the search index for 4 skills" in first.stderr
    again = cli_inproc("show", "acme/devtools/debugging", check=True)
    assert "building" not in again.stderr  # read back from the snapshot: nothing to say
    shutil.rmtree(Path(env["ONTOSKILLS_HOME"]) / "state/derived/search-index")
    quiet = cli_inproc("search", "debugging", "--quiet", check=True)
    assert quiet.stderr == ""  # --quiet: nothing, though this run built it again
    shutil.rmtree(Path(env["ONTOSKILLS_HOME"]) / "state/derived/search-index")
    shown = cli_inproc("show", "acme/design/colorize", check=True)
    assert "building the search index for 4 skills" in shown.stderr
