"""Agent Skills repositories named directly inside a project (issue 25 with issue 24):
`add`/`install` of a path, a git URL or `github:owner/repo[/skill]` declares the repository as
`[registries.<owner>-<repo>]` (kind skills, package_id) plus the dependency, and every project
verb works on it: sync in a fresh tree, ci, update after a new commit, remove (which drops the
table it wrote), link into the project's agent folder. Real folders and git repositories; the
`github:` host is a loopback git HTTP server (ONTOSKILLS_GITHUB_URL)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomllib

from ontoskills import lockfile
from ontoskills.registries import RegistryKind
from tests.conftest import CliRunner
from tests.helpers.githttp import push_to
from tests.helpers.registry import commit_all
from tests.helpers.skillrepo import BASIC, github_served, skill_md, write_repo

PID = "acme/skills"


def _lock(root: Path) -> lockfile.Lockfile:
    return lockfile.load(root / "ontoskills.lock")


def _manifest(root: Path) -> str:
    return (root / "ontoskills.toml").read_text()


def _declared(root: Path) -> tuple[Any, Any]:
    """The manifest's dependency on PID and the registries it declares."""
    data = tomllib.loads(_manifest(root))
    return data["dependencies"][PID], data.get("registries", {})


def _files_match_lock(root: Path) -> None:
    pkg = _lock(root).packages[PID]
    base = root / ".ontoskills/ontologies/author" / PID
    for f in pkg.files:
        assert hashlib.sha256((base / f.path).read_bytes()).hexdigest() == f.sha256, f.path


def test_add_a_folder_inside_the_project_then_remove(project: Path, cli_inproc: CliRunner) -> None:
    write_repo(project / "vendor" / "acme" / "skills", dict(BASIC))
    cli_inproc("init", check=True)
    cli_inproc("add", "./vendor/acme/skills", check=True)
    text = _manifest(project)
    assert '"acme/skills" = {registry = "acme-skills"}' in text
    assert '[registries.acme-skills]\nurl = "./vendor/acme/skills"\nkind = "skills"\n' in text
    assert 'package_id = "acme/skills"' in text
    lock = _lock(project)
    pkg = lock.packages[PID]
    assert lock.registries[pkg.registry].kind == RegistryKind.SKILLS
    assert pkg.trust_tier == "community" and set(pkg.skills) == {"git-helper", "pdf-tools"}
    hits = json.loads(cli_inproc("--json", "search", "fill a pdf form", check=True).stdout)
    assert hits["results"][0]["skill"] == f"{PID}/pdf-tools"

    cli_inproc("remove", PID, check=True)
    assert "registries" not in tomllib.loads(_manifest(project))  # the table it wrote
    assert "# The skills this project wants" in _manifest(project)  # comments kept
    assert _lock(project).packages == {}


def test_a_sibling_folder_is_recorded_relative_so_a_copy_elsewhere_syncs(
    tmp_path: Path, project: Path, cli_inproc: CliRunner
) -> None:
    write_repo(tmp_path / "src" / "acme" / "skills", dict(BASIC))
    cli_inproc("init", check=True)
    cli_inproc("install", str(tmp_path / "src" / "acme" / "skills"), check=True)
    assert 'url = "../src/acme/skills"' in _manifest(project)
    # the project and its sibling moved together (a monorepo checkout elsewhere)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copytree(tmp_path / "src", moved / "src")
    shutil.copytree(project, moved / "proj", ignore=shutil.ignore_patterns(".ontoskills"))
    os.chdir(moved / "proj")
    cli_inproc("ci", check=True)
    _files_match_lock(moved / "proj")


def test_add_names_one_skill_and_a_second_add_reuses_the_registry(
    tmp_path: Path, project: Path, cli_inproc: CliRunner
) -> None:
    repo = write_repo(tmp_path / "src" / "acme" / "skills", dict(BASIC), git=True)
    cli_inproc("init", check=True)
    cli_inproc("add", f"{repo}", "--skill", "pdf-tools", check=True)
    assert _declared(project)[0] == {"registry": "acme-skills", "skills": ["pdf-tools"]}
    assert set(_lock(project).packages[PID].skills) == {"pdf-tools"}
    cli_inproc("add", f"{repo}", "--skill", "git-helper", check=True)
    dep, regs = _declared(project)
    assert list(regs) == ["acme-skills"]
    assert dep == {"registry": "acme-skills", "skills": ["git-helper", "pdf-tools"]}
    assert set(_lock(project).packages[PID].skills) == {"git-helper", "pdf-tools"}


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, str]]:
    yield from github_served(tmp_path, monkeypatch)


def test_github_spec_in_a_project_ci_locked_and_update(
    served: tuple[Path, Path, str], project: Path, cli_inproc: CliRunner
) -> None:
    work, bare, base = served
    cli_inproc("init", check=True)
    cli_inproc("install", "github:acme/skills/pdf-tools", check=True)
    dep, regs = _declared(project)
    assert dep == {"registry": "acme-skills", "skills": ["pdf-tools"]}
    assert regs == {
        "acme-skills": {"url": f"{base}/acme/skills", "kind": "skills", "package_id": PID}
    }
    first = _lock(project).packages[PID].commit
    assert first is not None

    shutil.rmtree(project / ".ontoskills")  # a fresh clone: manifest + lock only
    cli_inproc("ci", check=True)
    _files_match_lock(project)

    write_repo(work, {"skills/pdf-tools/SKILL.md": skill_md("pdf-tools", "Fill forms faster.")})
    second = commit_all(work)
    push_to(work, bare)
    lock_before = (project / "ontoskills.lock").read_bytes()
    cli_inproc("sync", "--locked", check=True)  # the lock pins the commit: nothing to change
    assert (project / "ontoskills.lock").read_bytes() == lock_before
    cli_inproc("update", PID, check=True)
    assert _lock(project).packages[PID].commit == second
    _files_match_lock(project)


def test_link_in_a_project_follows_the_repository(
    tmp_path: Path, project: Path, cli_inproc: CliRunner
) -> None:
    repo = write_repo(project / "vendor" / "acme" / "skills", dict(BASIC))
    cli_inproc("init", check=True)
    cli_inproc("add", "./vendor/acme/skills", check=True)
    mine = project / ".claude" / "skills" / "mine"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: mine\ndescription: my own\n---\n")
    sub = project / "docs" / "deep"
    sub.mkdir(parents=True)
    os.chdir(sub)  # discovery finds the project from a subfolder
    cli_inproc("link", "--agent", "claude", "--project", check=True)
    linked = project / ".claude" / "skills"
    assert sorted(os.listdir(linked)) == ["git-helper", "mine", "pdf-tools"]
    authors = (repo / "skills" / "pdf-tools" / "SKILL.md").read_bytes()
    assert (linked / "pdf-tools" / "SKILL.md").read_bytes() == authors
    assert not (sub / ".claude").exists()

    cli_inproc("remove", PID, check=True)
    assert sorted(os.listdir(linked)) == ["mine"]
    cli_inproc("add", "./../../vendor/acme/skills", check=True)  # relative to where we are
    assert (linked / "git-helper" / "SKILL.md").is_file()
    cli_inproc("unlink", "--agent", "claude", "--project", check=True)
    assert sorted(os.listdir(linked)) == ["mine"]


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('url = "./r"\nkind = "skills"\npackage_id = "a/../b"', ":4: registries.r.package_id"),
        ('url = "./r"\nkind = "skills"\npackage_id = "a/b/c"', ":4: registries.r.package_id"),
        (
            'url = "./r"\nkind = "skills"\npackage_id = "\u0430cme/skills"',
            ":4: registries.r.package_id",
        ),
        ('url = "./r"\nkind = "folder"\npackage_id = "acme/skills"', ":4: registries.r.package_id"),
        ('url = "https://u:secret@h.example/a/b"\nkind = "skills"', ":2: registries.r.url"),
        ('url = "./r"\nkind = "skills"\npakage_id = "a/b"', ":4: registries.r.pakage_id"),
    ],
)
def test_a_hostile_repository_table_is_exit_2_naming_file_line_key(
    project: Path, cli_inproc: CliRunner, table: str, named: str
) -> None:
    body = f'[registries.r]\n{table}\n\n[dependencies]\n"acme/skills" = {{ registry = "r" }}\n'
    manifest = project / "ontoskills.toml"
    manifest.write_text(body)
    proc = cli_inproc("sync")
    assert proc.returncode == 2, proc.stderr
    assert f"{manifest}" in proc.stderr and named in proc.stderr, proc.stderr
    assert "secret" not in proc.stderr + proc.stdout
    assert manifest.read_text() == body
    assert not (project / "ontoskills.lock").exists() and not (project / ".ontoskills").exists()


def test_refusals_leave_the_manifest_as_it_was(
    tmp_path: Path, project: Path, cli_inproc: CliRunner
) -> None:
    write_repo(project / "vendor" / "acme" / "skills", dict(BASIC))
    other = write_repo(tmp_path / "other" / "acme" / "skills", dict(BASIC))
    cli_inproc("init", check=True)
    cli_inproc("add", "./vendor/acme/skills", check=True)
    before = _manifest(project)
    lock = (project / "ontoskills.lock").read_bytes()
    # the same registry name already names another location
    proc = cli_inproc("add", str(other))
    assert proc.returncode == 2 and "registry acme-skills already names" in proc.stderr
    assert "hint:" in proc.stderr
    # a direct spec is its own registry
    proc = cli_inproc("add", "./vendor/acme/skills", "--registry", "acme-skills")
    assert proc.returncode == 2 and "--registry" in proc.stderr
    # a folder with no SKILL.md
    (project / "empty").mkdir()
    proc = cli_inproc("add", "./empty")
    assert proc.returncode == 2 and "holds no SKILL.md" in proc.stderr
    assert _manifest(project) == before
    assert (project / "ontoskills.lock").read_bytes() == lock


def test_the_three_real_repositories_in_a_project_link_and_unlink(
    tmp_path: Path, project: Path, cli_inproc: CliRunner
) -> None:
    from tests.install.test_skillmd_repos import REPOS, _copy  # skips without ../shared

    authors: set[bytes] = set()
    copies = [_copy(name, tmp_path, git=False) for name in sorted(REPOS)]
    for repo in copies:
        authors |= {p.read_bytes() for p in repo.rglob("SKILL.md")}
    cli_inproc("init", check=True)
    cli_inproc("add", *map(str, copies), check=True)
    regs = tomllib.loads(_manifest(project))["registries"]
    assert sorted(r["package_id"] for r in regs.values()) == sorted(v[0] for v in REPOS.values())
    hits = json.loads(cli_inproc("--json", "search", "fill in a PDF form", check=True).stdout)
    assert hits["results"][0]["skill"] == "anthropics/skills/pdf"

    cli_inproc("link", "--agent", "claude", "--project", check=True)
    linked = project / ".claude" / "skills"
    names = sorted(os.listdir(linked))
    assert len(names) == sum(v[1] for v in REPOS.values())  # 38: every skill, one folder each
    for name in names:  # the authors' bytes (a renamed skill: its generated file is allowed)
        md = (linked / name / "SKILL.md").read_bytes()
        assert md in authors or md.startswith(f"---\nname: {name}\n".encode()), name
    cli_inproc("unlink", "--agent", "claude", "--project", check=True)
    assert not linked.exists() or os.listdir(linked) == []


def test_a_registry_given_by_location_on_add_is_declared_for_the_next_clone(
    tmp_path: Path, project: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    """`--registry ../reg add PKG` (uv: `add --index URL`) writes `[registries.reg]` with the
    ad-hoc cap kept, so a clone with no config and no flag syncs a later dependency from it."""
    from tests.helpers.registry import build_registry, sample_packages

    build_registry(tmp_path / "team-reg", sample_packages())
    (Path(env["ONTOSKILLS_HOME"]) / "config.toml").unlink()  # nothing configured anywhere
    cli_inproc("init", check=True)
    cli_inproc("--registry", "../team-reg", "add", "acme/devtools", check=True)
    data = tomllib.loads(_manifest(project))
    assert data["registries"] == {
        "team-reg": {"url": "../team-reg", "kind": "folder", "trust": "community"}
    }
    assert data["dependencies"]["acme/devtools"] == {"registry": "team-reg"}
    assert _lock(project).packages["acme/devtools"].trust_tier == "community"

    clone = tmp_path / "clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns(".ontoskills"))
    os.chdir(clone)
    with (clone / "ontoskills.toml").open("a") as f:
        f.write('"acme/design" = { registry = "team-reg" }\n')
    proc = cli_inproc("sync")  # no flag, no config: the manifest says where
    assert proc.returncode == 0, proc.stderr
    assert set(_lock(clone).packages) == {"acme/devtools", "acme/design"}
    # a name already taken by another location is exit 2, nothing written
    before = (clone / "ontoskills.toml").read_bytes()
    other = tmp_path / "x" / "team-reg"
    build_registry(other, sample_packages())
    proc = cli_inproc("--registry", str(other), "add", "acme/devtools")
    assert proc.returncode == 2 and "registry team-reg already names" in proc.stderr
    assert (clone / "ontoskills.toml").read_bytes() == before
