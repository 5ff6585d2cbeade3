"""Workspaces: one lock and one tree at the root, members' dependencies merged (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoskills import lockfile
from tests.conftest import CliRunner


def _member(root: Path, name: str, body: str) -> Path:
    folder = root / "apps" / name
    folder.mkdir(parents=True)
    (folder / "ontoskills.toml").write_text(body)
    return folder


def test_a_member_finds_the_root(
    project: Path, cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "ontoskills.toml").write_text('[workspace]\nmembers = ["apps/*"]\n')
    web = _member(project, "web", '[dependencies]\n"acme/design" = {}\n')
    api = _member(project, "api", '[dependencies]\n"acme/devtools" = { skills = ["reviewing"] }\n')
    monkeypatch.chdir(web)
    cli_inproc("sync", check=True)
    assert not (web / "ontoskills.lock").exists() and not (web / ".ontoskills").exists()
    lock = lockfile.load(project / "ontoskills.lock")
    assert set(lock.packages) == {"acme/design", "acme/devtools"}
    # declared differently in two members: refused, the member's manifest put back
    before = (web / "ontoskills.toml").read_text()
    proc = cli_inproc("add", "acme/devtools/planning")
    assert proc.returncode == 2 and "declared differently" in proc.stderr
    assert (web / "ontoskills.toml").read_text() == before
    # `add` in a member edits the member's manifest, installs at the root
    monkeypatch.chdir(api)
    cli_inproc("add", "acme/devtools/planning", check=True)
    assert 'skills = ["planning", "reviewing"]' in (api / "ontoskills.toml").read_text()
    pkg = lockfile.load(project / "ontoskills.lock").packages["acme/devtools"]
    assert pkg.requested == ["acme/devtools/planning", "acme/devtools/reviewing"]


def test_members_disagreeing_is_exit_2_naming_both_files(
    project: Path, cli_inproc: CliRunner
) -> None:
    (project / "ontoskills.toml").write_text('[workspace]\nmembers = ["apps/*"]\n')
    a = _member(project, "a", '[dependencies]\n"acme/design" = {}\n')
    b = _member(project, "b", '[dependencies]\n"acme/design" = { registry = "local" }\n')
    proc = cli_inproc("sync")
    assert proc.returncode == 2
    assert str(a / "ontoskills.toml") in proc.stderr and str(b / "ontoskills.toml") in proc.stderr
    assert not (project / "ontoskills.lock").exists()


def test_a_folder_the_root_does_not_list_is_its_own_project(
    project: Path, cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "ontoskills.toml").write_text('[workspace]\nmembers = ["apps/*"]\n')
    tools = project / "tools"
    tools.mkdir()
    (tools / "ontoskills.toml").write_text('[dependencies]\n"acme/design" = {}\n')
    monkeypatch.chdir(tools)
    cli_inproc("sync", check=True)
    assert (tools / "ontoskills.lock").is_file()
    assert not (project / "ontoskills.lock").exists()
