"""`mcp-config` for every client it knows, through the real CLI: the documented file, the
documented entry shape (tests/server/mcp_client_docs.py), both transports where the client
supports remote servers, tokens only as references to the environment, and what cannot be
written back refused with the file untouched."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import CliRunner
from tests.server.mcp_client_docs import DOCS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

URL = "http://127.0.0.1:8765/mcp"
SCOPES = [(client, scope) for client, doc in DOCS.items() for scope in doc["files"]]


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    user, project = tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    return user, project


def run(cli: CliRunner, dirs: tuple[Path, Path], *args: str, check: bool = True) -> Any:
    user, project = dirs
    extra = {"HOME": str(user), "XDG_CONFIG_HOME": str(user / ".config")}
    return cli("mcp-config", "--dir", str(project), *args, "--json", check=check, extra_env=extra)


def where(dirs: tuple[Path, Path], rel: str) -> Path:
    user, project = dirs
    return user / rel[2:] if rel.startswith("~/") else project / rel


def load(path: Path) -> Any:
    text = path.read_text()
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".yaml":
        return yaml.safe_load(text)
    return json.loads(text)


def same_shape(ours: dict[str, Any], documented: dict[str, Any]) -> None:
    """Our keys are documented ones, with the documented value types."""
    assert set(ours) <= set(documented), set(ours) - set(documented)
    for key, value in ours.items():
        assert type(value) is type(documented[key]), (key, value, documented[key])


@pytest.mark.parametrize(("client", "scope"), SCOPES)
def test_stdio_entry_in_the_documented_file_and_shape(
    cli: CliRunner, dirs: tuple[Path, Path], client: str, scope: str
) -> None:
    doc = DOCS[client]
    proc = run(cli, dirs, "--client", client, f"--{scope}")
    path = where(dirs, doc["files"][scope])
    assert json.loads(proc.stdout)["path"] == str(path)
    entry = load(path)[doc["key"]]["ontoskills"]
    same_shape(entry, doc["stdio"])
    command = entry.get("command") or entry.get("cmd")
    if isinstance(command, list):  # opencode: one array
        command, args = command[0], command[1:]
    else:
        args = entry["args"]
    assert Path(command).is_absolute() and args[-1] == "serve"
    # Idempotent: the same entry again writes nothing.
    again = json.loads(run(cli, dirs, "--client", client, f"--{scope}").stdout)
    assert again["action"] == "unchanged"


@pytest.mark.parametrize("client", [c for c, d in DOCS.items() if d["http"] is not None])
def test_http_entry_and_switching_transport(
    cli: CliRunner, dirs: tuple[Path, Path], client: str
) -> None:
    doc = DOCS[client]
    scope = next(iter(doc["files"]))
    path = where(dirs, doc["files"][scope])
    run(cli, dirs, "--client", client, f"--{scope}")  # stdio first
    proc = run(cli, dirs, "--client", client, f"--{scope}", "--url", URL)
    assert json.loads(proc.stdout)["action"] == "updated"
    entry = load(path)[doc["key"]]["ontoskills"]
    same_shape(entry, doc["http"])
    assert URL in json.dumps(entry)
    assert "command" not in entry and "cmd" not in entry and "args" not in entry
    back = run(cli, dirs, "--client", client, f"--{scope}")
    assert json.loads(back.stdout)["action"] == "updated"
    entry = load(path)[doc["key"]]["ontoskills"]
    assert URL not in json.dumps(entry)


@pytest.mark.parametrize(
    ("client", "reference"),
    [
        ("claude", "${ONTOSKILLS_SERVE_TOKEN}"),
        ("cursor", "${env:ONTOSKILLS_SERVE_TOKEN}"),
        ("vscode", "${env:ONTOSKILLS_SERVE_TOKEN}"),
        ("windsurf", "${env:ONTOSKILLS_SERVE_TOKEN}"),
        ("gemini", "${ONTOSKILLS_SERVE_TOKEN}"),
        ("opencode", "{env:ONTOSKILLS_SERVE_TOKEN}"),
        ("codex", "ONTOSKILLS_SERVE_TOKEN"),
    ],
)
def test_token_is_a_reference_to_the_environment(
    cli: CliRunner, dirs: tuple[Path, Path], client: str, reference: str
) -> None:
    doc = DOCS[client]
    scope = next(iter(doc["files"]))
    secret = "s3cret-token-value-0123456789"
    user, project = dirs
    extra = {
        "HOME": str(user),
        "XDG_CONFIG_HOME": str(user / ".config"),
        "ONTOSKILLS_SERVE_TOKEN": secret,
    }
    args = ["--client", client, f"--{scope}", "--url", URL, "--token-env", "ONTOSKILLS_SERVE_TOKEN"]
    cli("mcp-config", "--dir", str(project), *args, check=True, extra_env=extra)
    text = where(dirs, doc["files"][scope]).read_text()
    assert reference in text and secret not in text
    same_shape(load(where(dirs, doc["files"][scope]))[doc["key"]]["ontoskills"], doc["http"])


@pytest.mark.parametrize("client", ["zed", "goose", "cline", "claude-desktop"])
def test_clients_that_cannot_read_a_token_refuse_it(
    cli: CliRunner, dirs: tuple[Path, Path], client: str
) -> None:
    proc = run(cli, dirs, "--client", client, "--url", URL, "--token-env", "X_TOKEN", check=False)
    assert proc.returncode == 2 and "error" in json.loads(proc.stdout)
    path = where(dirs, next(iter(DOCS[client]["files"].values())))
    assert not path.exists()


def test_claude_desktop_has_no_remote_entry(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    proc = run(cli, dirs, "--client", "claude-desktop", "--url", URL, check=False)
    assert proc.returncode == 2
    assert "drop --url" in json.loads(proc.stdout)["error"]["hint"]


def test_bad_urls_and_names(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    for args in (
        ["--url", "ftp://host/mcp"],
        ["--url", "http://user:pw@host/mcp"],
        ["--url", "not a url"],
        ["--token-env", "X"],
        ["--url", URL, "--token-env", "1BAD"],
    ):
        proc = run(cli, dirs, "--client", "cursor", *args, check=False)
        assert proc.returncode == 2, args


def test_goose_yaml_merges_and_keeps_other_extensions(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    path = where(dirs, DOCS["goose"]["files"]["global"])
    path.parent.mkdir(parents=True)
    original = {
        "GOOSE_PROVIDER": "anthropic",
        "extensions": {"developer": {"enabled": True, "type": "builtin", "name": "developer"}},
    }
    path.write_text(yaml.safe_dump(original, sort_keys=False))
    run(cli, dirs, "--client", "goose")
    doc = load(path)
    assert doc["GOOSE_PROVIDER"] == "anthropic"
    assert doc["extensions"]["developer"] == original["extensions"]["developer"]
    assert doc["extensions"]["ontoskills"]["name"] == "ontoskills"
    assert path.with_name("config.yaml.bak").read_text() == yaml.safe_dump(
        original, sort_keys=False
    )


@pytest.mark.parametrize(
    "text",
    [
        "# my settings\nGOOSE_PROVIDER: openai\n",
        "GOOSE_PROVIDER: openai  # the provider\n",
        "base: &b {a: 1}\nother: *b\n",
        "x: !!binary aGVsbG8=\n",
        "extensions: [1, 2]\n",
        "extensions: {a: 1\n",
    ],
)
def test_goose_yaml_we_cannot_keep_is_refused_untouched(
    cli: CliRunner, dirs: tuple[Path, Path], text: str
) -> None:
    path = where(dirs, DOCS["goose"]["files"]["global"])
    path.parent.mkdir(parents=True)
    path.write_text(text)
    proc = run(cli, dirs, "--client", "goose", check=False)
    assert proc.returncode == 4 and path.read_text() == text
    assert "--print" in json.loads(proc.stdout)["error"]["hint"]


def test_hash_inside_a_yaml_string_is_not_a_comment(
    cli: CliRunner, dirs: tuple[Path, Path]
) -> None:
    path = where(dirs, DOCS["goose"]["files"]["global"])
    path.parent.mkdir(parents=True)
    path.write_text("GOOSE_MODEL: 'gpt#5'\nurl: \"http://x/#frag\"\n")
    run(cli, dirs, "--client", "goose")
    assert load(path)["GOOSE_MODEL"] == "gpt#5"


def test_opencode_new_file_names_its_schema(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    run(cli, dirs, "--client", "opencode")
    doc = load(where(dirs, "opencode.json"))
    assert doc["$schema"] == "https://opencode.ai/config.json"
    assert doc["mcp"]["ontoskills"]["type"] == "local"


def test_zed_settings_with_comments_are_refused(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    path = where(dirs, DOCS["zed"]["files"]["global"])
    path.parent.mkdir(parents=True)
    text = '// Zed settings\n{\n  "theme": "One Dark"\n}\n'
    path.write_text(text)
    proc = run(cli, dirs, "--client", "zed", check=False)
    assert proc.returncode == 4 and path.read_text() == text


def test_print_shows_the_yaml_and_http_forms(cli: CliRunner, dirs: tuple[Path, Path]) -> None:
    goose = json.loads(run(cli, dirs, "--client", "goose", "--print").stdout)["snippet"]
    assert yaml.safe_load(goose)["extensions"]["ontoskills"]["type"] == "stdio"
    codex = json.loads(
        run(cli, dirs, "--client", "codex", "--print", "--url", URL, "--token-env", "T").stdout
    )["snippet"]
    assert tomllib.loads(codex)["mcp_servers"]["ontoskills"] == {
        "url": URL,
        "bearer_token_env_var": "T",
    }
    assert not where(dirs, "~/.codex/config.toml").exists()


def launch_of(entry: dict[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    """The command, arguments and environment a client starts from our stdio entry."""
    command = entry.get("command") or entry.get("cmd")
    if isinstance(command, list):  # opencode: one array
        command, args = command[0], command[1:]
    else:
        args = entry["args"]
    env = entry.get("env") or entry.get("envs") or entry.get("environment") or {}
    return command, list(args), dict(env)


@pytest.mark.parametrize("client", sorted(DOCS))
def test_the_written_entry_starts_a_working_server(
    cli: CliRunner, dirs: tuple[Path, Path], installed: Path, client: str
) -> None:
    """What the client does with the entry: start it (with the client's environment, which
    has no ONTOSKILLS_HOME: the entry must name the home) and ask the tool a question."""
    import anyio
    from mcp import Client, StdioServerParameters

    doc = DOCS[client]
    scope = next(iter(doc["files"]))
    run(cli, dirs, "--client", client, f"--{scope}")
    entry = load(where(dirs, doc["files"][scope]))[doc["key"]]["ontoskills"]
    command, args, env = launch_of(entry)
    user, _ = dirs
    params = StdioServerParameters(command=command, args=args, env={"HOME": str(user), **env})

    async def main() -> str:
        async with Client(params) as client_session:
            found = await client_session.call_tool("ontoskill", {"q": "debug failing tests"})
            return str(found.structured_content["results"][0]["skill"])

    assert anyio.run(main) == "acme/devtools/debugging"
