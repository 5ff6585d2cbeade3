"""Defects left from round 2 (issue 25 round 3 item 4), each of which the old code had."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner


@pytest.mark.parametrize(
    "verb",
    [("sync", "--frozen"), ("sync", "--locked"), ("install", "--frozen"), ("ci",)],
)
def test_installing_the_lock_without_a_lock_is_exit_3_and_writes_nothing(
    project: Path, cli_inproc: CliRunner, verb: tuple[str, ...]
) -> None:
    # an empty manifest: the old `sync --frozen` wrote an empty lock and an empty tree here
    (project / "ontoskills.toml").write_text("[dependencies]\n")
    proc = cli_inproc(*verb)
    assert proc.returncode == 3, proc.stderr
    assert f"no lock at {project / 'ontoskills.lock'}" in proc.stderr, proc.stderr
    assert "hint: run `ontoskills sync`" in proc.stderr
    assert sorted(p.name for p in project.iterdir()) == ["ontoskills.toml"]
