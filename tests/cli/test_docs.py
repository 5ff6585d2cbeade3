"""docs/CLI.md documents what the CLI really has: every verb, every option, every env var."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer

from ontoskills.cli import app
from tests.conftest import REPO, CliRunner

DOC = (REPO / "docs/CLI.md").read_text(encoding="utf-8")
# Shared by every command and documented once, in the contract paragraph.
COMMON = {"--json", "--quiet", "-q", "--help", "-h"}


def commands() -> Iterator[tuple[str, typer.main.TyperCommand]]:
    """(path, click command) for every leaf command, e.g. ("registry add", <cmd>)."""
    root = typer.main.get_command(app)

    def walk(cmd: object, path: str) -> Iterator[tuple[str, typer.main.TyperCommand]]:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, f"{path} {name}".strip())
        else:
            yield path, cmd  # type: ignore[misc]

    yield from walk(root, "")


ALL = sorted(commands(), key=lambda item: item[0])


def option_names(cmd: object) -> list[str]:
    return [
        opt
        for param in getattr(cmd, "params", [])
        if getattr(param, "param_type_name", "") == "option"
        for opt in (*param.opts, *param.secondary_opts)
    ]


def doc_lines_for(path: str) -> str:
    """The CLI.md lines that show `path` as code (its row in a command table)."""
    pattern = re.compile(r"`" + re.escape(path) + r"(?![\w-])")
    return "\n".join(line for line in DOC.splitlines() if pattern.search(line))


def test_the_walk_finds_the_verbs() -> None:
    paths = {p for p, _ in ALL}
    assert {"install", "ci", "list", "registry add", "cache clean"} <= paths


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_every_command_and_option_is_in_cli_md(path: str, cmd: object) -> None:
    lines = doc_lines_for(path)
    assert lines, f"docs/CLI.md has no `{path} ...` entry"
    missing = [o for o in option_names(cmd) if o not in COMMON and o not in lines]
    assert not missing, f"docs/CLI.md line for `{path}` lacks {missing}"


def test_global_flags_and_their_env_vars_are_documented() -> None:
    root = typer.main.get_command(app)
    table = DOC.split("## Global flags", 1)[1].split("\n## ", 1)[0]
    for param in root.params:
        for opt in param.opts:
            if opt not in COMMON and opt != "--version":
                assert f"`{opt}" in table, opt
        if getattr(param, "envvar", None):
            assert f"`{param.envvar}" in table, param.envvar
    assert "--version" in DOC


def test_every_env_var_the_code_reads_is_documented() -> None:
    used = set()
    for source in (REPO / "ontoskills").rglob("*.py"):
        used |= set(re.findall(r"\bONTOSKILLS_[A-Z_]+\b", source.read_text(encoding="utf-8")))
    missing = sorted(name for name in used if name not in DOC)
    assert not missing, f"env vars read by the code but not in docs/CLI.md: {missing}"


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_help_documents_every_flag(cli: CliRunner, path: str, cmd: object) -> None:
    proc = cli(*path.split(), "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"Usage: ontoskills {path}" in proc.stdout
    for opt in option_names(cmd):
        assert opt in proc.stdout, opt
    assert proc.stderr == ""


def test_version(cli: CliRunner) -> None:
    from ontoskills import __version__

    proc = cli("--version", check=True)
    assert proc.stdout == f"ontoskills {__version__}\n"


# `serve` speaks MCP on stdout: neither a JSON report nor a quiet mode applies to it.
NO_REPORT = {"serve"}


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_every_verb_takes_json_and_quiet_after_it(path: str, cmd: object) -> None:
    """The synopsis `COMMAND [ARGS] [--json] [--quiet]` holds for every verb."""
    if path in NO_REPORT:
        pytest.skip("MCP stdio server")
    assert {"--json", "--quiet", "-q"} <= set(option_names(cmd)), path
