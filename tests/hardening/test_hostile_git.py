"""The malicious-registry suite against a local git registry: every folder case committed
to a repository (symlinks become git symlinks), plus submodules (gitlinks) and a symlinked
index, read from the object database. Same contract as the folder suite."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from tests.conftest import CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case
from tests.helpers.hostile import EVIL_ROOT, Case, build_hostile, folder_cases
from tests.helpers.registry import commit_all


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


CASES = [c for c in folder_cases() if c.id != "too-many-files"]  # 10k blobs: folder covers it


def _gitlink(rel: str) -> Callable[[Path], None]:
    """Commit a submodule entry (mode 160000) at rel, the way `git submodule add` does."""

    def mutate(root: Path) -> None:
        if (root / rel).is_dir():  # the whole package folder becomes a submodule
            shutil.rmtree(root / rel)
        commit_all(root, "registry")
        repo = pygit2.Repository(str(root))
        fake = pygit2.Oid(hex="1" * 40)
        repo.index.add(pygit2.IndexEntry(rel, fake, pygit2.enums.FileMode.COMMIT))
        (root / ".gitmodules").write_text(
            f'[submodule "x"]\n\tpath = {rel}\n\turl = https://evil.example/x.git\n'
        )
        repo.index.add(".gitmodules")
        repo.index.write()
        tree = repo.index.write_tree()
        sig = pygit2.Signature("Test", "test@example.invalid", 1_700_000_000, 0)
        repo.create_commit("HEAD", sig, sig, "submodule", tree, [repo.head.target])

    return mutate


GIT_ONLY = [
    Case("submodule-in-package", 4, mutate=_gitlink(f"{EVIL_ROOT}/tool/vendor")),
    Case("submodule-as-package", 4, mutate=_gitlink(EVIL_ROOT)),
]


def _build(tmp_path: Path, case: Case) -> Path:
    reg = tmp_path / "reg"
    if case.id.startswith("submodule"):
        build_hostile(reg, mutate=case.mutate)
    else:
        build_hostile(reg, mutate=case.mutate)
        commit_all(reg, "hostile")
    return reg


@pytest.mark.parametrize("case", CASES + GIT_ONLY, ids=[c.id for c in CASES + GIT_ONLY])
def test_hostile_git_registry(
    case: Case, cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = _build(tmp_path, case)
    check_case(case, cli, tmp_path, str(reg), env)
