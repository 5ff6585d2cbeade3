"""The malicious-registry suite against a folder registry, through the real CLI.

For every case: the documented exit code, no traceback, the previous install (tree, modes,
lock) byte-identical, nothing written outside the home, no staging left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case
from tests.helpers.hostile import EVIL, Case, build_hostile, folder_cases


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


CASES = folder_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_folder_registry(
    case: Case, cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(tmp_path / "reg", mutate=case.mutate)
    check_case(case, cli, tmp_path, reg, env)


def test_symlinked_parent_in_home_is_not_followed(
    cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    """A planted author/evil -> /outside symlink must not redirect the install."""
    home = Path(env["ONTOSKILLS_HOME"])
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", home / "ontologies/author/evil")
    reg = build_hostile(tmp_path / "reg")
    proc = cli("--registry", str(reg), "install", EVIL)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not any((tmp_path / "outside").iterdir())
    assert proc.returncode == 4, proc.stderr
    assert "symlink" in proc.stderr
