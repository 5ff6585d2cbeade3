"""Output contract, verb by verb: --json is one document on stdout, --quiet leaves stderr
empty on success, NO_COLOR / --no-color leave no ANSI escape even on a forced terminal, and
CI=true draws no progress bar."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages

ESC = "\x1b["
HIDE_CURSOR = "\x1b[?25l"  # rich hides the cursor while a progress bar is live


@pytest.fixture
def colour_cli(cli: CliRunner, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The real CLI as on a colour terminal: no NO_COLOR, FORCE_COLOR makes rich style output."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("CI", raising=False)
    env.pop("NO_COLOR", None)
    env["FORCE_COLOR"] = "1"
    return cli


def scenario(tmp_path: Path) -> list[list[str]]:
    """Every verb on main that succeeds offline, in an order where each one can succeed."""
    reg = build_registry(tmp_path / "reg", sample_packages())
    pkg = tmp_path / "pkg"
    shutil.copytree(reg / "packages/acme/design", pkg)
    return [
        ["--registry", str(reg), "install", "acme/devtools"],
        ["--registry", str(reg), "install", "acme/devtools"],  # unchanged
        ["list"],
        ["info", "acme/devtools"],
        ["outdated"],
        ["doctor"],
        ["disable", "acme/devtools/planning"],
        ["enable", "acme/devtools/planning"],
        ["update"],
        ["ci"],
        ["cache", "dir"],
        ["registry", "add", "local", str(reg)],
        ["registry", "list"],
        ["registry", "verify", str(reg)],
        ["registry", "init", str(tmp_path / "newreg"), "--no-git"],
        ["mcp-config", "--client", "cursor", "--print"],
        ["mcp-config", "--client", "cursor", "--project", "--dir", str(tmp_path / "proj")],
        ["pack", str(pkg)],
        ["publish", str(pkg), "--registry", str(tmp_path / "newreg"), "--dry-run"],
        ["remove", "acme/devtools"],
        ["cache", "clean"],
        ["registry", "remove", "local"],
    ]


def expected_code(args: list[str]) -> int:
    """verify and publish refuse the sample packages' 8-dimensional intents (exit 4)."""
    return 4 if args[:2] == ["registry", "verify"] or args[0] == "publish" else 0


def test_json_is_one_document_and_quiet_is_silent(colour_cli: CliRunner, tmp_path: Path) -> None:
    for args in scenario(tmp_path):
        proc = colour_cli("--json", "--quiet", *args, extra_env={"NO_COLOR": "1"})
        assert proc.returncode == expected_code(args), (args, proc.stderr)
        doc = json.loads(proc.stdout)  # fails on any extra text on stdout
        assert doc["schema_version"] == 1, args
        if proc.returncode == 0:
            assert proc.stderr == "", (args, proc.stderr)
        else:
            assert "error" in doc or doc.get("ok") is False, doc
        assert ESC not in proc.stdout, args


def test_no_color_flag_means_no_escapes_on_a_colour_terminal(
    colour_cli: CliRunner, tmp_path: Path
) -> None:
    for args in scenario(tmp_path):
        proc = colour_cli("--no-color", *args)
        assert proc.returncode == expected_code(args), (args, proc.stderr)
        assert ESC not in proc.stdout + proc.stderr, (args, proc.stdout + proc.stderr)
        assert proc.stderr or proc.stdout, args  # every verb says something without --quiet


def test_quiet_human_output_keeps_stderr_empty_on_success(cli: CliRunner, tmp_path: Path) -> None:
    for args in scenario(tmp_path):
        proc = cli("--quiet", *args)
        assert proc.returncode == expected_code(args), (args, proc.stderr)
        if proc.returncode == 0:  # warnings and errors are kept by --quiet
            assert proc.stderr == "", (args, proc.stderr)
        assert "{" not in proc.stdout.split("\n", 1)[0] or args[0] == "mcp-config", args


def test_errors_obey_no_color(colour_cli: CliRunner) -> None:
    coloured = colour_cli("install", "Foo/../x")
    assert coloured.returncode == 2
    assert ESC in coloured.stderr  # the check below can fail: colour is on here
    for extra_args, extra_env in ((["--no-color"], {}), ([], {"NO_COLOR": "1"})):
        proc = colour_cli(*extra_args, "install", "Foo/../x", extra_env=extra_env)
        assert proc.returncode == 2
        assert ESC not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("error: invalid package spec")


def test_ci_draws_no_progress_bar(colour_cli: CliRunner, tmp_path: Path) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    bar = colour_cli("--registry", str(reg), "install", "acme/devtools", check=True)
    assert HIDE_CURSOR in bar.stderr  # a terminal gets the live bar
    colour_cli("remove", "acme/devtools", check=True)
    ci = colour_cli(
        "--registry", str(reg), "install", "acme/devtools", extra_env={"CI": "true"}, check=True
    )
    assert HIDE_CURSOR not in ci.stderr
    assert "fetching acme/devtools" in ci.stderr  # stages become plain lines instead
    quiet = colour_cli("--quiet", "ci", check=True)
    assert quiet.stderr == ""


def test_no_prompt_without_a_tty(cli: CliRunner, tmp_path: Path) -> None:
    """Nothing reads stdin: a command given closed input never waits for an answer."""
    reg = build_registry(tmp_path / "reg", sample_packages())
    for extra_env in ({}, {"CI": "true"}):
        proc = cli(
            "--registry", str(reg), "install", "acme/devtools", input="", extra_env=extra_env
        )
        assert proc.returncode == 0, proc.stderr
        assert "?" not in proc.stderr.replace("0/?", "")
