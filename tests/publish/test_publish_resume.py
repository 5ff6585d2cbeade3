"""A publish killed mid-way (benchmarks/kill_publish.py) is completed by re-running it: the
states a SIGKILL leaves are rebuilt here with real files and real git, then re-published."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest

from ontoskills.errors import VersionConflictError
from ontoskills.publish.publish import PublishOptions, publish
from tests.helpers.registry import PackageSpec, SkillSpec, write_package

from .conftest import git


def package(tmp: Path, version: str) -> Path:
    spec = PackageSpec("acme/tools", [SkillSpec("lint", f"lint {version}")], version=version)
    spec.files_array = True
    spec.assets = {"lint/scripts/run.sh": (f"echo {version}\n".encode(), True)}
    write_package(tmp / version, spec)
    return tmp / version / "packages/acme/tools"


def head_tree(reg: Path) -> str:
    repo = pygit2.Repository(str(reg))
    return str(repo.head.peel(pygit2.Commit).tree_id)


def hidden(reg: Path) -> list[str]:
    return sorted(p.name for p in (reg / "packages/acme").iterdir() if p.name.startswith("."))


def test_killed_before_the_commit_is_committed_by_the_rerun(
    tmp_path: Path, git_registry: Path, git_env: dict[str, str]
) -> None:
    opts = PublishOptions(registry=str(git_registry))
    publish(package(tmp_path, "1.0.0"), opts)
    v2 = package(tmp_path, "2.0.0")
    publish(v2, opts)
    want = head_tree(git_registry)
    # the state a kill after the swap + index write, before the commit, leaves
    git("reset", "--mixed", "HEAD~1", cwd=git_registry)
    assert head_tree(git_registry) != want
    with pytest.raises(VersionConflictError):  # a dry run still refuses: it completes nothing
        publish(v2, PublishOptions(registry=str(git_registry), dry_run=True))
    result = publish(v2, opts)
    assert result.commit is not None and head_tree(git_registry) == want
    assert not pygit2.Repository(str(git_registry)).status()
    with pytest.raises(VersionConflictError):  # now complete: published versions are immutable
        publish(v2, opts)


def test_leftovers_of_a_killed_swap_are_undone(
    tmp_path: Path, folder_registry: Path, git_env: dict[str, str]
) -> None:
    opts = PublishOptions(registry=str(folder_registry))
    publish(package(tmp_path, "1.0.0"), opts)
    final = folder_registry / "packages/acme/tools"
    # killed between the two renames: the old version aside, a complete staging copy
    os.replace(final, final.parent / ".tools.old-4242")
    (final.parent / ".tools.publish-4243/lint").mkdir(parents=True)
    (final.parent / ".tools.publish-4243/lint/partial.ttl").write_text("half")
    (folder_registry / ".index.json.abc.tmp").write_text("{")
    v2 = package(tmp_path, "2.0.0")
    result = publish(v2, opts)
    assert result.previous_version == "1.0.0", "the old version was put back first"
    assert hidden(folder_registry) == [] and not list(folder_registry.glob(".*.tmp"))
    manifest = json.loads((final / "package.json").read_text())
    assert manifest["version"] == "2.0.0"
    assert (final / "lint/scripts/run.sh").read_text() == "echo 2.0.0\n"


def test_leftover_after_a_complete_publish_is_cleaned_without_error(
    tmp_path: Path, folder_registry: Path, git_env: dict[str, str]
) -> None:
    opts = PublishOptions(registry=str(folder_registry))
    v1 = package(tmp_path, "1.0.0")
    publish(v1, opts)
    # killed while removing the moved-aside previous version, after everything else
    (folder_registry / "packages/acme/.tools.old-77/lint").mkdir(parents=True)
    publish(v1, opts)
    assert hidden(folder_registry) == []
    with pytest.raises(VersionConflictError):
        publish(v1, opts)
