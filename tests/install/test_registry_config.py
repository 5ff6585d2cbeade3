from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills import lockfile
from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs print and return: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def test_registry_add_list_remove_and_trust_cap(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    listed = json.loads(cli("registry", "list", "--json", check=True).stdout)
    assert listed["registries"][0]["name"] == "ontostore" and listed["registries"][0]["default"]
    cli("registry", "add", "corp", str(reg), "--trust", "verified", check=True)
    listed = json.loads(cli("registry", "list", "--json", check=True).stdout)
    assert [r["name"] for r in listed["registries"]] == ["corp"]
    assert listed["registries"][0]["kind"] == "folder"
    cli("install", "acme/devtools", check=True)  # resolved through the configured registry
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    assert lock.packages["acme/devtools"].trust_tier == "verified"  # official capped
    assert lock.packages["acme/devtools"].registry == "corp"
    assert cli("registry", "add", "Bad Name", str(reg)).returncode == 2
    assert cli("registry", "add", "x", str(tmp_path / "missing")).returncode == 2
    assert cli("registry", "remove", "nope").returncode == 7
    cli("registry", "remove", "corp", check=True)
    assert "corp" not in cli("registry", "list", check=True).stdout


def test_malformed_config_is_usage_error(cli: CliRunner, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[registries.x\nurl=")
    proc = cli("registry", "list")
    assert proc.returncode == 2
    assert "config.toml" in proc.stderr


def test_cache_dir_and_clean(cli: CliRunner, env: dict[str, str]) -> None:
    assert cli("cache", "dir", check=True).stdout.strip() == env["ONTOSKILLS_CACHE_DIR"]
    blob = Path(env["ONTOSKILLS_CACHE_DIR"]) / "blobs/sha256/ab/abc"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"x" * 10)
    out = json.loads(cli("cache", "clean", "--json", check=True).stdout)
    assert out["freed_bytes"] == 10 and not blob.exists()


def test_json_errors_are_one_document(cli: CliRunner, tmp_path: Path) -> None:
    proc = cli("--lockfile", str(tmp_path / "none.lock"), "ci", "--json")
    assert proc.returncode == 3
    doc = json.loads(proc.stdout)
    assert doc["error"]["exit_code"] == 3 and doc["schema_version"] == 1


def test_lock_with_conflict_markers_exit_3(cli: CliRunner, tmp_path: Path) -> None:
    lock = tmp_path / "ontoskills.lock"
    lock.write_text("lock_version = 1\n<<<<<<< ours\n=======\n>>>>>>> theirs\n")
    proc = cli("--lockfile", str(lock), "list")
    assert proc.returncode == 3
    assert str(lock) in proc.stderr and "merge-conflict" in proc.stderr


def test_credentials_in_registry_urls_are_refused_and_never_echoed(
    cli: CliRunner, env: dict[str, str]
) -> None:
    for args in (
        ("--registry", "https://user:s3cret-pw@example.com/reg/", "install", "a/b"),
        ("registry", "add", "x", "https://s3cret-pw@github.com/o/r.git"),
        ("registry", "add", "x", "ssh://git:s3cret-pw@example.com/o/r.git"),
    ):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert "ONTOSKILLS_TOKEN" in proc.stderr
        assert "s3cret-pw" not in proc.stderr + proc.stdout
    config = Path(env["ONTOSKILLS_HOME"]) / "config.toml"
    assert not config.exists()
    cli("registry", "add", "gh", "git@github.com:o/r.git", check=True)  # ssh user, no secret
    config.write_text('[registries.x]\nurl = "https://u:s3cret-pw@example.com/"\n')
    proc = cli("registry", "list")
    assert proc.returncode == 2 and "s3cret-pw" not in proc.stderr
