"""`install` names the skills it left disabled (opt-in packages) and the command that
serves them; installing a skill by name serves it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills import lockfile
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs print and return: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _registry(root: Path) -> Path:
    return build_registry(
        root,
        [
            PackageSpec(  # every skill opt-in, as all of skillsbench ships
                id="bench/all-off",
                skills=[
                    SkillSpec("alpha", "Alpha", intents=("a",), default_enabled=False),
                    SkillSpec("beta", "Beta", intents=("b",), default_enabled=False),
                ],
            ),
            PackageSpec(
                id="bench/mixed",
                skills=[
                    SkillSpec("shown", "Shown", intents=("c",)),
                    SkillSpec("hidden", "Hidden", intents=("d",), default_enabled=False),
                ],
            ),
            PackageSpec(id="bench/plain", skills=[SkillSpec("on", "On", intents=("e",))]),
        ],
    )


def test_install_text_names_disabled_skills_and_the_enable_command(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _registry(tmp_path / "reg")
    err = cli("--registry", str(reg), "install", "bench/all-off", "bench/mixed", "bench/plain")
    assert err.returncode == 0, err.stderr
    text = err.stderr
    assert "2 of 2 skills installed but disabled" in text and "alpha, beta" in text
    assert "ontoskills enable bench/all-off\n" in text  # the whole package: one target
    assert "1 of 2 skills installed but disabled" in text and ": hidden" in text
    assert "ontoskills enable bench/mixed/hidden" in text
    assert "bench/plain" in text and "enable bench/plain" not in text
    # The printed command is the real syntax: running it serves the skills.
    cli("enable", "bench/all-off", "bench/mixed/hidden", check=True)
    again = cli("search", "alpha", "--json", check=True)
    assert json.loads(again.stdout)["results"][0]["skill"] == "bench/all-off/alpha"


def test_install_json_carries_disabled_and_enable(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _registry(tmp_path / "reg")
    out = cli("--registry", str(reg), "install", "bench/mixed", "bench/plain", "--json", check=True)
    changes = {c["package_id"]: c for c in json.loads(out.stdout)["changes"]}
    assert changes["bench/mixed"]["disabled"] == ["hidden"]
    assert changes["bench/mixed"]["enable"] == "ontoskills enable bench/mixed/hidden"
    assert changes["bench/plain"]["disabled"] == []
    assert changes["bench/plain"]["enable"] is None


def test_install_by_name_enables_an_installed_disabled_skill(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _registry(tmp_path / "reg")
    home = Path(env["ONTOSKILLS_HOME"])
    cli("--registry", str(reg), "install", "bench/mixed", check=True)
    assert lockfile.load(home / "ontoskills.lock").packages["bench/mixed"].skills == {
        "shown": True,
        "hidden": False,
    }
    out = cli("--registry", str(reg), "install", "bench/mixed/hidden", "--json", check=True)
    (change,) = json.loads(out.stdout)["changes"]
    assert (change["action"], change["skills"]) == ("enabled", ["hidden"])
    assert lockfile.load(home / "ontoskills.lock").packages["bench/mixed"].skills["hidden"]
    text = cli("--registry", str(reg), "install", "bench/mixed/hidden").stderr
    assert "already up to date" in text  # nothing left to do the second time
