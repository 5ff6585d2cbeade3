"""`init` in a workspace member, and project `remove` of a package named twice (trial
round 3: each failed as written here on the old code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner


def test_init_in_a_workspace_member_writes_no_gitignore_and_names_the_root(
    project: Path, cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli_inproc("init", check=True)
    with (project / "ontoskills.toml").open("a") as f:
        f.write('\n[workspace]\nmembers = ["apps/*"]\n')
    member = project / "apps/a"
    member.mkdir(parents=True)
    monkeypatch.chdir(member)
    proc = cli_inproc("init", check=True)
    assert (member / "ontoskills.toml").is_file()
    assert not (member / ".gitignore").exists()  # a member has no tree of its own
    assert f"member of the workspace at {project}" in proc.stderr
    assert "commit ontoskills.toml and ontoskills.lock" not in proc.stderr
    (project / "apps/b").mkdir()
    doc = json.loads(cli_inproc("init", str(project / "apps/b"), "--json", check=True).stdout)
    assert doc["workspace"] == str(project) and doc["written"] == [
        str(project / "apps/b/ontoskills.toml")
    ]
    # The member is one: add from it writes the root's lock, not one beside it.
    cli_inproc("add", "acme/design", check=True)
    assert (project / "ontoskills.lock").is_file() and not (member / "ontoskills.lock").exists()


def test_init_outside_a_workspace_still_ignores_the_tree(
    project: Path, cli_inproc: CliRunner
) -> None:
    proc = cli_inproc("init", "--json", check=True)
    doc = json.loads(proc.stdout)
    assert doc["workspace"] is None and str(project / ".gitignore") in doc["written"]


def test_project_remove_of_a_package_named_twice_removes_it_once(
    project: Path, cli_inproc: CliRunner
) -> None:
    (project / "ontoskills.toml").write_text('[dependencies]\n"acme/design" = {}\n')
    cli_inproc("sync", check=True)
    proc = cli_inproc("remove", "acme/design", "acme/design")
    assert proc.returncode == 0, proc.stderr
    assert "acme/design" not in (project / "ontoskills.toml").read_text()
    assert "acme/design" not in (project / "ontoskills.lock").read_text()
