"""`ontoskills search` and `ontoskills show` through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.skills import install_synthetic, installed_home


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


def test_search_json_shape(installed: Path, cli: CliRunner) -> None:
    proc = cli("search", "write an implementation plan", "--json", "--top-k", "2", check=True)
    doc = json.loads(proc.stdout)
    assert list(doc) == [
        "schema_version",
        "query",
        "mode",
        "confidence",
        "results",
        "disabled",
        "installed_skills",
        "warnings",  # every --json document's (docs/CLI.md)
    ]
    assert doc["schema_version"] == 1
    assert doc["query"] == "write an implementation plan"
    assert doc["mode"] == "bm25"
    assert doc["confidence"] == "high"
    assert doc["installed_skills"] == 5  # hidden-gem is disabled
    assert 1 <= len(doc["results"]) <= 2
    first = doc["results"][0]
    assert list(first) == [
        "skill",
        "score",
        "trust_tier",
        "description",
        "matched_intents",
        "also_in",
    ]
    assert first["skill"] == "acme/devtools/planning"
    assert isinstance(first["score"], float)
    assert first["matched_intents"] == ["write an implementation plan"]


def test_search_text_and_min_trust(installed: Path, cli: CliRunner) -> None:
    out = cli("search", "pdf", "--min-trust", "official", check=True).stdout
    assert "acme/devtools/pdf" in out and "other/docs/pdf" not in out


@pytest.mark.parametrize(
    "args",
    [
        ("search", "x", "--top-k", "0"),
        ("search", "x", "--top-k", "51"),
        ("search", "x", "--mode", "magic"),
        ("search", "x", "--min-trust", "gold"),
        ("search", "x", "--verify", "sometimes"),
        ("search", "   "),
        ("search", "x", "--mode", "semantic"),  # no model installed
    ],
)
def test_bad_arguments_exit_2(installed: Path, cli: CliRunner, args: tuple[str, ...]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""


def test_show_json_and_unknown_skill(installed: Path, cli: CliRunner, env: dict[str, str]) -> None:
    doc = json.loads(cli("show", "acme/devtools/debugging", "--json", check=True).stdout)
    assert doc["schema_version"] == 1
    assert doc["skill"] == "acme/devtools/debugging"
    assert doc["intents"][:2] == ["debug failing tests", "find root cause of a bug"]
    assert "git-bisect" in doc["aliases"]
    for key in (
        "requirements",
        "knowledge",
        "workflows",
        "sections",
        "code_examples",
        "dependencies",
        "assets",
        "scripts",
    ):
        assert isinstance(doc[key], list), key
    assert doc["path"] == str(
        Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools/debugging"
    )
    text = cli("show", "acme/devtools/debugging", check=True).stdout
    assert text.startswith("# acme/devtools/debugging [official]")
    proc = cli("show", "acme/devtools/nope", "--json")
    assert proc.returncode == 7
    assert json.loads(proc.stdout)["error"]["exit_code"] == 7


def test_tampered_file_reported_on_stderr(
    installed: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    module = Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools/planning/ontoskill.ttl"
    module.write_text(module.read_text() + "# edited\n")
    proc = cli("search", "implementation plan", "--json", check=True)
    assert "acme/devtools/planning/ontoskill.ttl" in proc.stderr
    assert all(r["skill"] != "acme/devtools/planning" for r in json.loads(proc.stdout)["results"])
    assert "`ontoskills doctor`" in proc.stderr and "install --force" not in proc.stderr


def test_the_not_served_hint_leads_to_a_repair_that_works(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    install_synthetic(cli, tmp_path)
    module = Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools/planning/ontoskill.ttl"
    module.write_text(module.read_text() + "# edited\n")
    proc = cli("search", "implementation plan", check=True)
    assert "`ontoskills doctor`" in proc.stderr and "install --force" not in proc.stderr
    doctor = cli("doctor")
    (step,) = re.findall(r"next: `ontoskills ([^`]+)`", doctor.stdout + doctor.stderr)
    assert step == "update --force acme/devtools"
    cli(*step.split(), check=True)  # as written
    again = json.loads(cli("search", "implementation plan", "--json", check=True).stdout)
    assert again["results"][0]["skill"] == "acme/devtools/planning"


def test_empty_home_searches_nothing_and_writes_nothing(
    cli: CliRunner, env: dict[str, str]
) -> None:
    doc = json.loads(cli("search", "anything", "--json", check=True).stdout)
    assert doc["results"] == [] and doc["mode"] == "bm25"
    assert not Path(env["ONTOSKILLS_HOME"]).exists()
