"""`publish`: every refusal has its own message and exit code and writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from ontoskills import limits
from ontoskills.errors import OntoskillsError
from ontoskills.publish.pack import pack
from ontoskills.publish.publish import PublishOptions
from ontoskills.publish.publish import publish as publish_domain
from ontoskills.publish.skillmd import convert
from tests.conftest import CliRunner

from .conftest import GIT_ENV, make_package, make_source, refs, tree_state


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def publish(cli: CliRunner, pkg: Path, registry: Path | str, *args: str):  # type: ignore[no-untyped-def]
    return cli("publish", str(pkg), "--registry", str(registry), *args, extra_env=GIT_ENV)


def inproc(pkg: Path, registry: Path, **opts: object) -> tuple[int, str]:
    """The publish domain call in this process (fast): (exit code, message)."""
    try:
        publish_domain(pkg, PublishOptions(registry=str(registry), **opts))  # type: ignore[arg-type]
    except OntoskillsError as exc:
        return exc.exit_code, exc.message
    return 0, ""


def rewrite_manifest(pkg: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads((pkg / "package.json").read_text())
    edit(data)
    (pkg / "package.json").write_text(json.dumps(data, indent=2) + "\n")


def test_publish_to_git_registry_commits_package_and_index(
    tmp_path: Path, cli: CliRunner, git_registry: Path
) -> None:
    pkg = make_package(tmp_path)
    proc = publish(cli, pkg, git_registry, "--json", "-m", "Add acme/tools")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["trust_tier"] == "community" and doc["target"] == "git"
    repo = pygit2.Repository(str(git_registry))
    head = repo[repo.head.target]
    assert str(head.id) == doc["commit"] and head.message.strip() == "Add acme/tools"
    assert head.author.name == GIT_ENV["GIT_AUTHOR_NAME"]
    assert not repo.status(), "everything written is committed"
    index = json.loads((git_registry / "index.json").read_text())
    assert index["packages"] == [
        {
            "package_id": "acme/tools",
            "trust_tier": "community",
            "source_kind": "ontology",
            "manifest_path": "packages/acme/tools/package.json",
        }
    ]
    published = git_registry / "packages" / "acme" / "tools"
    assert (published / "package.json").read_bytes() == (pkg / "package.json").read_bytes()
    assert os.stat(published / "lint" / "scripts" / "run.sh").st_mode & 0o100
    assert cli("registry", "verify", str(git_registry)).returncode == 0


def test_dry_run_writes_nothing(tmp_path: Path, cli: CliRunner, git_registry: Path) -> None:
    pkg = make_package(tmp_path)
    before, before_refs = tree_state(git_registry), refs(git_registry)
    proc = publish(cli, pkg, git_registry, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert tree_state(git_registry) == before and refs(git_registry) == before_refs
    manifest = json.loads((pkg / "package.json").read_text())
    for f in manifest["files"]:
        assert f"{f['sha256']}" in proc.stdout and f["path"] in proc.stdout
    assert "+++ b/index.json" in proc.stdout and '+      "package_id": "acme/tools"' in proc.stdout
    assert "+++ b/packages/acme/tools/package.json" in proc.stdout
    doc = json.loads(publish(cli, pkg, git_registry, "--dry-run", "--json").stdout)
    assert doc["dry_run"] is True and doc["commit"] is None
    assert tree_state(git_registry) == before


def _bump(tmp_path: Path, version: str) -> Path:
    return make_package(tmp_path, version=version)


@pytest.mark.parametrize(
    ("second", "code", "message"),
    [
        ("1.0.0", 2, "already published; published versions are immutable"),
        ("0.9.0", 2, "is lower than the published 1.0.0"),
        ("1.0.0-rc.1", 2, "is lower than the published 1.0.0"),
    ],
)
def test_version_must_be_new_and_greater(
    tmp_path: Path,
    git_registry: Path,
    git_env: dict[str, str],
    second: str,
    code: int,
    message: str,
) -> None:
    assert inproc(_bump(tmp_path, "1.0.0"), git_registry) == (0, "")
    pkg = make_package(tmp_path, version=second, name=f"second-{second}")
    before, before_refs = tree_state(git_registry), refs(git_registry)
    got, text = inproc(pkg, git_registry)
    assert got == code and message in text
    assert tree_state(git_registry) == before and refs(git_registry) == before_refs


def test_newer_version_replaces_package_and_keeps_tier(
    tmp_path: Path, cli: CliRunner, folder_registry: Path
) -> None:
    assert (
        publish(cli, _bump(tmp_path, "1.0.0"), folder_registry, "--trust", "verified").returncode
        == 0
    )
    newer = make_package(tmp_path, version="1.1.0", name="newer")
    (newer / "format" / "ontoskill.ttl").unlink()  # a removed skill must disappear
    rewrite_manifest(newer, lambda m: None)
    import shutil

    shutil.rmtree(newer / "format")
    pack(newer)
    proc = publish(cli, newer, folder_registry, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["previous_version"] == "1.0.0" and doc["trust_tier"] == "verified"
    assert not (folder_registry / "packages" / "acme" / "tools" / "format").exists()
    raised = make_package(tmp_path, version="1.2.0", name="raised")
    proc = publish(cli, raised, folder_registry, "--trust", "official")
    assert proc.returncode == 4 and "can never raise its trust tier" in proc.stderr


def _symlink(pkg: Path) -> None:
    (pkg / "lint" / "evil").symlink_to("/etc/passwd")


def _unsafe_path(pkg: Path) -> None:
    rewrite_manifest(
        pkg,
        lambda m: m["files"].append(
            {"path": "../outside.sh", "sha256": "0" * 64, "size": 1, "executable": False}
        ),
    )


def _bad_turtle(pkg: Path) -> None:
    data = b"@prefix oc: <https://ontoskills.sh/ontology#> .\noc:a oc:b "
    (pkg / "lint" / "ontoskill.ttl").write_bytes(data)

    def fix(m: dict) -> None:  # keep the hash right so the Turtle check is what fails
        for f in m["files"]:
            if f["path"] == "lint/ontoskill.ttl":
                f.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))

    rewrite_manifest(pkg, fix)


def _identifier(pkg: Path) -> None:
    rewrite_manifest(pkg, lambda m: m["skills"][1].update(id="linter"))


def _dimension(pkg: Path) -> None:
    vec = [0.0] * 383 + [1.0]
    (pkg / "lint" / "intents.json").write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "dimension": 384,
                "intents": [{"intent": "lint my code", "embedding": vec, "skills": ["lint"]}],
            }
        )
    )
    pack(pkg)
    (pkg / "lint" / "intents.json").write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "dimension": 8,
                "intents": [{"intent": "lint my code", "embedding": [0.5] * 8, "skills": ["lint"]}],
            }
        )
    )
    pack(pkg)


def _tampered(pkg: Path) -> None:
    (pkg / "lint" / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\nrm -rf ~\n")


def _missing_reference(pkg: Path) -> None:
    rewrite_manifest(pkg, lambda m: m["modules"].append("ghost/ontoskill.ttl"))


def _too_big(pkg: Path) -> None:
    (pkg / "big.bin").write_bytes(b"x" * (1024 * 1024 + 1))
    pack(pkg)


@pytest.mark.parametrize(
    ("breaker", "code", "message", "env"),
    [
        (_symlink, 4, "lint/evil is a symlink", {}),
        (_unsafe_path, 4, "'../outside.sh': '..' segment", {}),
        (_bad_turtle, 4, "lint/ontoskill.ttl: invalid Turtle", {}),
        (_identifier, 4, "skill linter: lint/ontoskill.ttl has dcterms:identifier 'lint'", {}),
        (_dimension, 4, "has dimension 384, file says 8", {}),
        (_tampered, 4, "lint/scripts/run.sh: sha256 does not match", {}),
        (
            _missing_reference,
            4,
            "ghost/ontoskill.ttl is referenced by package.json but missing",
            {},
        ),
        (
            _too_big,
            4,
            "declared size 1048577 exceeds the file size limit",
            {"ONTOSKILLS_MAX_FILE_MB": "1"},
        ),
    ],
)
def test_invalid_packages_are_refused_and_nothing_is_written(
    tmp_path: Path,
    git_registry: Path,
    git_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    breaker: Callable[[Path], None],
    code: int,
    message: str,
    env: dict[str, str],
) -> None:
    pkg = make_package(tmp_path)
    breaker(pkg)
    if env:  # limits are read at import; the CLI test below covers the variable itself
        monkeypatch.setattr(limits, "MAX_FILE_BYTES", int(env["ONTOSKILLS_MAX_FILE_MB"]) << 20)
    before, before_refs = tree_state(git_registry), refs(git_registry)
    got, text = inproc(pkg, git_registry)
    assert (got, message in text) == (code, True), text
    assert tree_state(git_registry) == before and refs(git_registry) == before_refs


def test_refusal_through_the_cli_exit_code_and_hint(
    tmp_path: Path, cli: CliRunner, git_registry: Path
) -> None:
    pkg = make_package(tmp_path)
    _too_big(pkg)
    before = tree_state(git_registry)
    proc = cli(
        "publish",
        str(pkg),
        "--registry",
        str(git_registry),
        "--json",
        extra_env={**GIT_ENV, "ONTOSKILLS_MAX_FILE_MB": "1"},
    )
    assert proc.returncode == 4
    err = json.loads(proc.stdout)["error"]
    assert "exceeds the file size limit" in err["message"] and err["exit_code"] == 4
    assert "ontoskills pack" in err["hint"]
    assert tree_state(git_registry) == before


def test_confusable_name_refused_unless_forced(
    tmp_path: Path, cli: CliRunner, folder_registry: Path
) -> None:
    assert publish(cli, make_package(tmp_path, "acme/tools"), folder_registry).returncode == 0
    for i, lookalike in enumerate(("acme/too1s", "acme/tool", "acrne/tools", "acme/tools_")):
        pkg = make_package(tmp_path, lookalike, name=f"look{i}")
        before = tree_state(folder_registry)
        code, text = inproc(pkg, folder_registry)
        assert code == 4, lookalike
        assert f"{lookalike} is too close to the existing package acme/tools" in text
        assert tree_state(folder_registry) == before
    proc = publish(cli, make_package(tmp_path, "acme/t0ols", name="cli"), folder_registry)
    assert proc.returncode == 4 and "--force" in proc.stderr
    forced = make_package(tmp_path, "acme/tool", name="forced")
    assert publish(cli, forced, folder_registry, "--force").returncode == 0
    distinct = make_package(tmp_path, "acme/toolbox", name="distinct")
    assert publish(cli, distinct, folder_registry).returncode == 0


def test_trust_rules(tmp_path: Path, cli: CliRunner, folder_registry: Path) -> None:
    pkg = make_package(tmp_path)
    proc = publish(cli, pkg, folder_registry, "--trust", "superb")
    assert proc.returncode == 2 and "'--trust': 'superb' is not one of" in proc.stderr
    assert publish(cli, pkg, folder_registry, "--trust", "official").returncode == 0
    index = json.loads((folder_registry / "index.json").read_text())
    assert index["packages"][0]["trust_tier"] == "official"


def test_unknown_registry_and_missing_manifest(tmp_path: Path, cli: CliRunner) -> None:
    pkg = make_package(tmp_path)
    empty = tmp_path / "not-a-registry"
    empty.mkdir()
    proc = publish(cli, pkg, empty)
    assert proc.returncode == 2 and "has no index.json" in proc.stderr
    proc = publish(cli, tmp_path, empty)
    assert proc.returncode == 7 and "has no package.json" in proc.stderr


def test_hidden_unicode_and_missing_registry_are_refused(
    tmp_path: Path, folder_registry: Path
) -> None:
    src = make_source(tmp_path / "src")
    skill = src / "lint" / "SKILL.md"
    skill.write_text(skill.read_text().replace("Use this skill", "Use this\u202eskill"))
    pkg = tmp_path / "pkg"
    convert(src, pkg)
    before = tree_state(folder_registry)
    code, text = inproc(pkg, folder_registry)
    assert code == 4 and "invisible or bidi characters (U+202E)" in text
    assert tree_state(folder_registry) == before
    code, text = inproc(make_package(tmp_path), tmp_path / "nowhere")
    assert code == 2 and "does not exist" in text


def test_hidden_unicode_spelled_as_a_turtle_escape_is_refused(
    tmp_path: Path, folder_registry: Path
) -> None:
    """`\\u202E` in a Turtle literal is the same bidi control once parsed: install always
    caught it, publish and `registry verify` scanned only the raw bytes."""
    pkg = make_package(tmp_path)
    module = next(pkg.rglob("*.ttl"))
    text = module.read_text()
    assert "Use this skill" in text
    module.write_text(text.replace("Use this skill", "Use this\\u202Eskill", 1))
    pack(pkg)  # re-hash: the package is well formed, only its text is hostile
    before = tree_state(folder_registry)
    code, out = inproc(pkg, folder_registry)
    assert code == 4 and "U+202E" in out
    assert tree_state(folder_registry) == before
