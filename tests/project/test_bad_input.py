"""A project's bad input: exit codes naming file, line and key; nothing written (issue 24)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner


def _write(root: Path, body: str) -> Path:
    path = root / "ontoskills.toml"
    path.write_text(body)
    return path


def _nothing_written(root: Path) -> None:
    assert not (root / "ontoskills.lock").exists()
    assert not (root / ".ontoskills").exists()


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            '[dependencies]\n"acme/design" = { skils = ["x"] }\n',
            ":2: dependencies.acme/design.skils",
        ),
        (
            '[dependencies]\n"acme/design" = { skills = "x" }\n',
            ":2: dependencies.acme/design.skills",
        ),
        ("[dependencies]\nnot-a-package = {}\n", ":2: dependencies.not-a-package"),
        ('[dependencies."acme/design"]\n\nskils = ["x"]\n', ":3: dependencies.acme/design.skils"),
        ('[dependencies]\n"acme/design" = { skills = ["../x"] }\n', ":2: dependencies.acme/design"),
        ('\n\n[policy]\nmin_trust = "high"\n', ":4: policy.min_trust"),
        ("[embeddings]\nenabled = 1\n", ":2: embeddings.enabled"),
        ('[registries.corp]\ntrust = "official"\n', "registries.corp.url is missing"),
        ('[workspace]\nmembers = ["../x"]\n', ":2: workspace.members"),
        ("[dependecies]\n", ":1: dependecies is not a known key"),
        ("[dependencies\n", "invalid TOML"),
    ],
)
def test_malformed_manifest_is_exit_2_naming_file_line_key(
    project: Path, cli_inproc: CliRunner, body: str, named: str
) -> None:
    manifest = _write(project, body)
    for verb in (("sync",), ("add", "acme/design"), ("list",)):
        proc = cli_inproc(*verb)
        assert proc.returncode == 2, (verb, proc.stderr)
        assert str(manifest) in proc.stderr and named in proc.stderr, proc.stderr
    assert manifest.read_text() == body
    _nothing_written(project)


def test_undeclared_registry_is_exit_2(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = { registry = "corp" }\n')
    proc = cli_inproc("sync")
    assert proc.returncode == 2
    assert "'corp'" in proc.stderr and "not declared" in proc.stderr
    _nothing_written(project)


def test_init_refuses_to_overwrite_and_never_duplicates_gitignore(
    project: Path, cli_inproc: CliRunner
) -> None:
    (project / ".gitignore").write_text("node_modules/\n.ontoskills/")
    cli_inproc("init", check=True)
    assert (project / ".gitignore").read_text() == "node_modules/\n.ontoskills/"
    before = (project / "ontoskills.toml").read_text()
    proc = cli_inproc("init")
    assert proc.returncode == 2 and "already exists" in proc.stderr
    assert (project / "ontoskills.toml").read_text() == before


def test_init_appends_to_a_gitignore_without_a_final_newline(
    project: Path, cli_inproc: CliRunner
) -> None:
    (project / ".gitignore").write_text("dist")
    cli_inproc("init", check=True)
    assert (project / ".gitignore").read_text() == "dist\n/.ontoskills/\n"


def test_symlinked_tree_is_refused(tmp_path: Path, project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, project / ".ontoskills")
    proc = cli_inproc("sync")
    assert proc.returncode == 4 and "symlink" in proc.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_tree_holding_foreign_files_is_refused(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    (project / ".ontoskills").mkdir()
    (project / ".ontoskills" / "notes.txt").write_text("mine")
    proc = cli_inproc("sync")
    assert proc.returncode == 2 and "notes.txt" in proc.stderr
    assert sorted(p.name for p in (project / ".ontoskills").iterdir()) == ["notes.txt"]


def test_project_flag_needs_a_manifest(tmp_path: Path, cli_inproc: CliRunner) -> None:
    proc = cli_inproc("--project", str(tmp_path), "list")
    assert proc.returncode == 2 and "no ontoskills.toml" in proc.stderr


def test_add_outside_a_project_says_how_to_start_one(
    tmp_path: Path, cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    proc = cli_inproc("add", "acme/design")
    assert proc.returncode == 2 and "ontoskills init" in proc.stderr


def test_a_manifest_in_a_world_writable_folder_is_ignored(
    tmp_path: Path, cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-tmp"
    (shared / "mine").mkdir(parents=True)
    (shared / "ontoskills.toml").write_text('[dependencies]\n"acme/design" = {}\n')
    shared.chmod(0o1777)  # like /tmp: anyone may plant a manifest here
    monkeypatch.chdir(shared / "mine")
    proc = cli_inproc("list", check=True)
    assert "project" not in proc.stderr
    assert not (shared / ".ontoskills").exists()
