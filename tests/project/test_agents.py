"""mcp-config --project and serve in a project; list and search say which tree (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner


def _write(root: Path, body: str) -> None:
    (root / "ontoskills.toml").write_text(body)


@pytest.mark.parametrize(
    ("client", "relpath", "key"),
    [("claude", ".mcp.json", "mcpServers"), ("cursor", ".cursor/mcp.json", "mcpServers")],
)
def test_mcp_config_project_serves_this_project_from_anywhere(
    project: Path,
    cli_inproc: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    client: str,
    relpath: str,
    key: str,
) -> None:
    _write(project, "[dependencies]\n")
    sub = project / "docs"
    sub.mkdir()
    monkeypatch.chdir(sub)  # run from a subfolder: the file goes to the project's root
    cli_inproc("mcp-config", "--client", client, "--project", check=True)
    written = json.loads((project / relpath).read_text())
    entry = written[key]["ontoskills"]
    args = entry["args"]
    assert args[-3:] == ["--project", str(project), "serve"], args
    assert "--home" not in args and "--lockfile" not in args
    assert not (sub / relpath).exists()


def test_list_and_search_say_which_project(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, "[dependencies]\n")
    listed = cli_inproc("list", check=True)
    assert f"project {project}" in listed.stderr
    found = cli_inproc("search", "debug", check=True)
    assert f"project {project}" in found.stderr


def test_serve_refuses_a_lock_the_policy_refuses(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    cli_inproc("sync", check=True)
    _write(project, '[dependencies]\n"acme/design" = {}\n[policy]\nmin_trust = "official"\n')
    proc = cli_inproc("serve")
    assert proc.returncode == 4, proc.stderr
    assert "policy min_trust" in proc.stderr and "acme/design" in proc.stderr
