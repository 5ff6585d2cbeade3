"""mcp-config --project and serve in a project; list and search say which tree (issue 24)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import CliRunner


def _write(root: Path, body: str) -> None:
    (root / "ontoskills.toml").write_text(body)


@pytest.mark.parametrize(
    ("client", "relpath", "key", "args"),
    [
        ("claude", ".mcp.json", "mcpServers", ["serve"]),
        ("cursor", ".cursor/mcp.json", "mcpServers", ["--project", "${workspaceFolder}", "serve"]),
        ("vscode", ".vscode/mcp.json", "servers", ["--project", "${workspaceFolder}", "serve"]),
    ],
)
def test_mcp_config_project_writes_a_portable_entry(
    project: Path,
    cli_inproc: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    client: str,
    relpath: str,
    key: str,
    args: list[str],
) -> None:
    """The project's file is committed: no path of this machine in it (the command by name,
    the project from the client's working folder or its own workspace variable)."""
    _write(project, "[dependencies]\n")
    sub = project / "docs"
    sub.mkdir()
    monkeypatch.chdir(sub)  # run from a subfolder: the file goes to the project's root
    proc = cli_inproc("mcp-config", "--client", client, "--project", check=True)
    text = (project / relpath).read_text()
    entry = json.loads(text)[key]["ontoskills"]
    assert entry["command"] == "ontoskills" and entry["args"] == args, entry
    assert str(project) not in text and sys.executable not in text
    assert "ontoskills` from PATH" in proc.stderr
    assert not (sub / relpath).exists()


@pytest.mark.parametrize("client", ["claude", "vscode"])
def test_the_portable_entry_serves_the_project_in_a_clone(
    project: Path, tmp_path: Path, cli_inproc: CliRunner, client: str
) -> None:
    """A teammate's clone (another folder, nothing of ours in their environment but
    `ontoskills` on PATH) starts the committed entry the way the client does."""
    import anyio
    from mcp import Client, StdioServerParameters

    _write(project, '[dependencies]\n"acme/devtools" = {}\n')
    cli_inproc("sync", check=True)
    cli_inproc("mcp-config", "--client", client, "--project", check=True)
    clone = tmp_path / "clone"
    shutil.copytree(project, clone, symlinks=True)
    shutil.rmtree(project)  # the clone must not lean on the original's absolute path
    relpath, key = (
        (".mcp.json", "mcpServers") if client == "claude" else (".vscode/mcp.json", "servers")
    )
    entry = json.loads((clone / relpath).read_text())[key]["ontoskills"]
    # VS Code puts the workspace folder in; Claude Code starts the server in the project.
    args = [a.replace("${workspaceFolder}", str(clone)) for a in entry["args"]]
    cwd = clone if client == "claude" else tmp_path
    user = tmp_path / "teammate"
    user.mkdir()
    bin_dir = str(Path(sys.executable).parent)  # this venv's console script `ontoskills`
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    params = StdioServerParameters(
        command=entry["command"], args=args, env={"HOME": str(user), "PATH": path}, cwd=cwd
    )

    async def main() -> str:
        async with Client(params) as session:
            found = await session.call_tool("ontoskill", {"q": "debug failing tests"})
            return str(found.structured_content["results"][0]["skill"])

    assert anyio.run(main) == "acme/devtools/debugging"


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
