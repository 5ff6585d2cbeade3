"""The three real Agent Skills repositories of ../shared/skillmd-repos (issue 25 "Done when"),
each as a local git registry and as a folder: install, search, `show`, MCP (tool, resources,
Skills-extension digests), `ci` from the lock in a second home, update after a change.
Skipped when ../shared is absent. Lean on purpose: one install per case, the rest reads it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, shared_path
from tests.helpers.domain import Domain
from tests.helpers.registry import commit_all
from tests.helpers.skillrepo import skill_md, write_repo

# folder -> (package id, skills, a query and the skill it must find first, a symlink quirk)
REPOS: dict[str, tuple[str, int, str, str, tuple[str, str] | None]] = {
    "anthropics__skills": ("anthropics/skills", 17, "fill in a PDF form", "pdf", None),
    "obra__superpowers": (
        "obra/superpowers",
        14,
        "find the root cause of a failing test",
        "systematic-debugging",
        ("AGENTS.md", "CLAUDE.md"),
    ),
    "vercel-labs__agent-skills": (
        "vercel-labs/agent-skills",
        7,
        "deploy my app to vercel",
        "deploy-to-vercel",
        ("CLAUDE.md", "AGENTS.md"),
    ),
}


def _copy(name: str, tmp_path: Path, git: bool) -> Path:
    pid = REPOS[name][0]
    dest = tmp_path / "repos" / pid
    shutil.copytree(shared_path("skillmd-repos", name), dest)
    for dirpath, dirnames, filenames in os.walk(dest):
        for n in dirnames + filenames:
            os.chmod(os.path.join(dirpath, n), 0o755 if n in dirnames else 0o644)
    os.chmod(dest, 0o755)
    link = REPOS[name][4]
    if link is not None:  # the published tree has it as a symlink (git archive flattened it)
        (dest / link[0]).unlink()
        os.symlink(link[1], dest / link[0])
    if git:
        commit_all(dest, "import")
    return dest


@pytest.mark.parametrize("git", [False, True], ids=["folder", "git"])
@pytest.mark.parametrize("name", sorted(REPOS))
def test_real_repository_install_search_show_ci_update(
    name: str, git: bool, domain: Domain, cli_inproc: CliRunner, tmp_path: Path
) -> None:
    pid, count, query, first, _ = REPOS[name]
    repo = _copy(name, tmp_path, git)
    domain.install(str(repo))
    pkg = domain.lock().packages[pid]
    assert len(pkg.skills) == count and pkg.trust_tier == "community"
    assert (pkg.commit is not None) is git
    for f in pkg.files:  # authors' files byte for byte
        if not f.path.endswith(("ontoskill.ttl", "package.json")):
            assert (domain.package_dir(pid) / f.path).read_bytes() == (repo / f.path).read_bytes()

    found = json.loads(cli_inproc("search", query, "--json", check=True).stdout)
    assert found["results"][0]["skill"] == f"{pid}/{first}"
    shown = cli_inproc("show", f"{pid}/{first}", check=True).stdout
    assert first in shown

    other = Domain(home=tmp_path / "home2", lockfile=domain.lock_path)
    other.ci()
    for f in pkg.files:
        data = (other.package_dir(pid) / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256

    write_repo(repo, {"skills/zz-new/SKILL.md": skill_md("zz-new", "Added later.")}, git=git)
    domain.update(pid)
    after = domain.lock().packages[pid]
    assert "zz-new" in after.skills and after.version != pkg.version


def test_real_repositories_over_mcp(domain: Domain, tmp_path: Path) -> None:
    from tests.server.test_skills_ext import request, walk

    for name in sorted(REPOS):
        domain.install(str(_copy(name, tmp_path, git=False)))
    home = domain.home_path
    result = walk(home)
    assert result.problems == []  # every listed file read back with its digest
    assert len(result.entries) == sum(r[1] for r in REPOS.values())
    uri = "skill://obra/superpowers/brainstorming/SKILL.md"
    original = shared_path("skillmd-repos", "obra__superpowers", "skills/brainstorming/SKILL.md")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("resources/read", {"uri": uri}),
        ("tools/call", {"name": "ontoskill", "arguments": {"q": "design before implementing"}}),
    ]
    read, tool = request(home, calls)
    assert read["contents"][0]["text"].encode() == original.read_bytes()  # verbatim
    text = json.dumps(tool)
    assert "obra/superpowers/brainstorming" in text
