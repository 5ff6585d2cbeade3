"""What each entry point loads (docs/PERFORMANCE.md): a run imports the modules of the verb
it names, `--version` none of them, and a BM25 server never loads ONNX Runtime."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from ontoskills import cli
from tests.conftest import REPO
from tests.helpers.skills import installed_home
from tests.helpers.tinymodel import build_tiny_model
from tests.server.rawclient import RawServer

HEAVY = ("mcp", "mcp_types", "onnxruntime", "pyoxigraph", "numpy", "tokenizers", "rich")


def imported(env: dict[str, str], *args: str) -> set[str]:
    """Every module the real CLI imported for `args` (python -X importtime)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ontoskills", *args],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def roots(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_every_verb_is_mapped_to_the_module_that_registers_it() -> None:
    seen: dict[str, str] = {}
    for module in cli.COMMAND_MODULES:
        app = typer.Typer()
        __import__(f"ontoskills.commands.{module}", fromlist=["register"]).register(app)
        names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
        for name in names:
            assert name is not None
            seen[name] = module
    assert seen == cli.VERBS


@pytest.mark.parametrize(
    ("argv", "verb", "modules"),
    [
        (["search", "x"], "search", ("search",)),
        (["--home", "search", "show", "k"], "show", ("show",)),  # --home takes a value
        (["--home=h", "-q", "enable", "a/b"], "enable", ("toggle",)),
        (["--json", "registry", "list"], "registry", ("registry",)),
        (["--help"], None, cli.COMMAND_MODULES),
        (["serch", "x"], "serch", cli.COMMAND_MODULES),  # a typo: click suggests from all
        ([], None, cli.COMMAND_MODULES),
    ],
)
def test_a_run_registers_only_its_verb(
    argv: list[str], verb: str | None, modules: tuple[str, ...]
) -> None:
    assert cli.parse_leading(argv)[0] == verb
    assert cli.modules_for(argv) == modules


def test_the_leading_option_lists_are_the_root_callbacks_options() -> None:
    """cli.py picks the verb with plain lists of the root options (no typer loaded); the
    callback declaring them lives in commands/_root.py: the two must not drift apart, or a
    value of a new option would be taken for the verb."""
    command = typer.main.get_command(cli.build_app(("search",)))
    takes_value: set[str] = set()
    flags: set[str] = set()
    for param in command.params:  # every one an option (typer's own click: no isinstance)
        if "--version" not in param.opts:
            (flags if getattr(param, "is_flag", False) else takes_value).update(param.opts)
    assert takes_value == set(cli._VALUE_OPTIONS)
    assert flags == set(cli._FLAGS)


def test_version_imports_no_command_and_no_library(env: dict[str, str]) -> None:
    mods = imported(env, "--version")
    assert not roots(mods) & {*HEAVY, "typer", "click", "pydantic"}
    assert not any(m.startswith("ontoskills.commands") for m in mods)


def test_version_after_root_options_is_still_answered(env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", "--json", "--home", "/nonexistent", "--version"],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("ontoskills ")


def test_bm25_search_loads_neither_the_sdk_nor_onnx_nor_the_install_stack(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]
) -> None:
    home = installed_home(tmp_path_factory, env)
    build_tiny_model(home / "ontologies" / "system" / "embeddings")  # a model is installed
    imported(env, "search", "warm up")  # the first run builds the snapshot (Turtle, encoder)
    mods = imported(env, "search", "debug failing tests", "--mode", "bm25")
    assert not roots(mods) & {"mcp", "mcp_types", "onnxruntime", "pyoxigraph", "tokenizers"}
    assert not any(m.startswith(("ontoskills.install", "ontoskills.sources")) for m in mods)
    assert "rich.progress" not in mods and "ontoskills.commands.install" not in mods


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_a_bm25_server_never_maps_onnx_runtime(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]
) -> None:
    home = installed_home(tmp_path_factory, env)
    build_tiny_model(home / "ontologies" / "system" / "embeddings")
    with RawServer(env, "serve", "--mode", "bm25") as raw:
        raw.initialize("2025-11-25")
        reply = raw.request(
            "tools/call", {"name": "ontoskill", "arguments": {"q": "debug failing tests"}}
        )
        assert reply["result"]["structuredContent"]["results"], reply
        maps = Path(f"/proc/{raw.proc.pid}/maps").read_text()
    assert "onnxruntime" not in maps and "libtokenizers" not in maps
    assert "numpy" in maps  # the check does see the libraries the server loaded
