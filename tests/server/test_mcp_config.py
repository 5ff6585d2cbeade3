"""`ontoskills mcp-config`: each client's file, merging, idempotence, backup, refusal, --print."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import CliRunner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


FILES = {
    ("claude", "project"): (".mcp.json", "mcpServers"),
    ("claude", "global"): ("~/.claude.json", "mcpServers"),
    ("cursor", "project"): (".cursor/mcp.json", "mcpServers"),
    ("cursor", "global"): ("~/.cursor/mcp.json", "mcpServers"),
    ("vscode", "project"): (".vscode/mcp.json", "servers"),
    ("codex", "global"): ("~/.codex/config.toml", "mcp_servers"),
    ("codex", "project"): (".codex/config.toml", "mcp_servers"),
    ("windsurf", "global"): ("~/.codeium/windsurf/mcp_config.json", "mcpServers"),
}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    user, project = tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    return user, project


def _run(cli: CliRunner, dirs: tuple[Path, Path], *args: str, check: bool = True):  # type: ignore[no-untyped-def]
    user, project = dirs
    return cli(
        "mcp-config",
        "--dir",
        str(project),
        *args,
        "--json",
        check=check,
        extra_env={"HOME": str(user), "XDG_CONFIG_HOME": str(user / ".config")},
    )


def _path(dirs: tuple[Path, Path], rel: str) -> Path:
    user, project = dirs
    return user / rel[2:] if rel.startswith("~/") else project / rel


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    return (
        tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    )


@pytest.mark.parametrize(("client", "scope"), sorted(FILES))
def test_each_client_gets_a_working_entry(
    cli: CliRunner, dirs: tuple[Path, Path], env: dict[str, str], client: str, scope: str
) -> None:
    rel, key = FILES[(client, scope)]
    proc = _run(cli, dirs, "--client", client, f"--{scope}")
    doc = json.loads(proc.stdout)
    path = _path(dirs, rel)
    assert doc["path"] == str(path) and doc["action"] == "added"
    entry = _load(path)[key]["ontoskills"]
    # The test env sets ONTOSKILLS_HOME, which the client will not have: it must be explicit.
    assert entry["args"] == ["--home", env["ONTOSKILLS_HOME"], "serve"]
    assert Path(entry["command"]).is_absolute()
    assert entry.get("type") == ("stdio" if client in ("claude", "vscode") else None)


def test_merge_keeps_other_servers_and_is_idempotent_with_backup(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    path = _path(dirs, ".cursor/mcp.json")
    path.parent.mkdir(parents=True)
    original = {"mcpServers": {"other": {"command": "x", "args": []}}, "theme": "dark"}
    path.write_text(json.dumps(original))
    path.chmod(0o600)
    first = json.loads(_run(cli, dirs, "--client", "cursor").stdout)
    assert first["action"] == "added"
    assert json.loads(Path(first["backup"]).read_text()) == original
    merged = _load(path)
    assert merged["theme"] == "dark" and set(merged["mcpServers"]) == {"other", "ontoskills"}
    assert path.stat().st_mode & 0o777 == 0o600
    before = path.read_bytes()
    second = json.loads(_run(cli, dirs, "--client", "cursor").stdout)
    assert second["action"] == "unchanged" and second["backup"] is None
    assert path.read_bytes() == before
    # Another name is another entry; ours is still there exactly once.
    third = json.loads(_run(cli, dirs, "--client", "cursor", "--name", "onto2").stdout)
    assert third["action"] == "added"
    assert set(_load(path)["mcpServers"]) == {"other", "ontoskills", "onto2"}


def test_update_replaces_stale_entry_and_keeps_user_keys(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    path = _path(dirs, ".mcp.json")
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ontoskills": {
                        "type": "stdio",
                        "command": "/old/ontoskills",
                        "args": ["serve"],
                        "env": {"A": "1"},
                    }
                }
            }
        )
    )
    doc = json.loads(_run(cli, dirs, "--client", "claude").stdout)
    assert doc["action"] == "updated"
    entry = _load(path)["mcpServers"]["ontoskills"]
    assert entry["command"] != "/old/ontoskills" and entry["env"] == {"A": "1"}


def test_codex_toml_merge_preserves_comments_and_tables(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    path = _path(dirs, "~/.codex/config.toml")
    path.parent.mkdir(parents=True)
    path.write_text(
        '# my settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "d"]\n'
    )
    _run(cli, dirs, "--client", "codex")
    text = path.read_text()
    assert text.startswith("# my settings\n")
    data = tomllib.loads(text)
    assert data["model"] == "o4"
    assert set(data["mcp_servers"]) == {"docs", "ontoskills"}
    assert (path.parent / "config.toml.bak").read_text().startswith("# my settings")
    before = path.read_bytes()
    assert json.loads(_run(cli, dirs, "--client", "codex").stdout)["action"] == "unchanged"
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("rel", "client", "body"),
    [
        (".mcp.json", "claude", '{"mcpServers": {"a": 1,}}'),
        (".vscode/mcp.json", "vscode", '// comment\n{"servers": {}}'),
        (".cursor/mcp.json", "cursor", '{"mcpServers": []}'),
        (".cursor/mcp.json", "cursor", "[1, 2]"),
        ("~/.codex/config.toml", "codex", "[mcp_servers\ncommand = 1"),
        ("~/.codex/config.toml", "codex", 'mcp_servers = "x"\n'),
    ],
)
def test_malformed_file_is_refused_untouched(
    cli: CliRunner, dirs: tuple[Path, Path], rel: str, client: str, body: str
) -> None:
    path = _path(dirs, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    proc = _run(cli, dirs, "--client", client, check=False)
    assert proc.returncode == 4, proc.stderr
    err = json.loads(proc.stdout)["error"]
    assert "--print" in err["hint"]
    assert path.read_text() == body
    assert not path.with_name(path.name + ".bak").exists()


def test_print_changes_nothing(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    user, project = dirs
    proc = cli(
        "mcp-config",
        "--client",
        "vscode",
        "--dir",
        str(project),
        "--print",
        check=True,
        extra_env={"HOME": str(user)},
    )
    snippet = json.loads(proc.stdout)
    assert snippet["servers"]["ontoskills"]["type"] == "stdio"
    assert snippet["servers"]["ontoskills"]["args"][-1] == "serve"
    assert not any(project.rglob("*")) and not any(user.rglob("*"))


def test_default_home_adds_no_flags_and_bad_usage(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    user, project = dirs
    env = {"HOME": str(user), "ONTOSKILLS_HOME": ""}
    proc = cli("mcp-config", "--client", "codex", "--print", extra_env=env, check=True)
    assert tomllib.loads(proc.stdout)["mcp_servers"]["ontoskills"]["args"] == ["serve"]
    proc = cli(
        "mcp-config", "--client", "windsurf", "--project", "--dir", str(project), extra_env=env
    )
    assert proc.returncode == 2 and "--global" in proc.stderr
    proc = cli("mcp-config", "--client", "emacs", extra_env=env)
    assert proc.returncode == 2
    for bad_name in ("", "a b", "x" * 65, "a.b", 'q"'):
        proc = cli("mcp-config", "--client", "codex", "--name", bad_name, extra_env=env)
        assert proc.returncode == 2, bad_name
    proc = cli("mcp-config", "--client", "claude", "--project", "--global", extra_env=env)
    assert proc.returncode == 2


def test_client_is_a_choice_derived_from_the_clients_table(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    """`--client` is a `Choice` built from `mcpclients.CLIENTS`: any case is accepted, and a
    wrong word is refused by the option parser (exit 2, nothing resolved or written) with
    every client of the table listed."""
    from ontoskills.clientconfig.clients import CLIENTS, ClientName

    assert ClientName.values() == tuple(CLIENTS)  # one table: the two cannot drift
    user, project = dirs
    env = {"HOME": str(user)}
    doc = json.loads(cli("mcp-config", "--client", "VSCode", "--print", "--json",
                         extra_env=env, check=True).stdout)  # fmt: skip
    assert doc["client"] == "vscode", doc
    proc = cli("mcp-config", "--client", "emacs", "--dir", str(project), extra_env=env)
    assert proc.returncode == 2
    assert "invalid value for '--client'" in proc.stderr, proc.stderr
    assert all(f"'{name}'" in proc.stderr for name in CLIENTS), proc.stderr
    assert not any(project.rglob("*")) and not any(user.rglob("*"))
