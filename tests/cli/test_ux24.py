"""Issue 24's "Also" list: what a new user trying the CLI tripped over. Each test runs the
real CLI entry (in-process: same parsing, contexts and renderers as the console script) over
a synthetic registry."""

from __future__ import annotations

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
