"""A registry written by `publish` installs over folder, git and HTTP with its hashes checked,
and the lock pins the git commit so `ci` reinstalls the old version after a newer publish."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pygit2
import pytest

from ontoskills import lockfile
from tests.conftest import CliRunner

from .conftest import GIT_ENV, make_package


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _published(tmp_path: Path, cli: CliRunner, registry: Path, version: str = "1.0.0") -> dict:
    pkg = make_package(tmp_path, version=version, name=f"v{version}")
    proc = cli("publish", str(pkg), "--registry", str(registry), "--json", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    return json.loads((pkg / "package.json").read_text())


def _check_installed(env: dict[str, str], manifest: dict, kind: str) -> lockfile.LockedPackage:
    home = Path(env["ONTOSKILLS_HOME"])
    lock = lockfile.load(home / "ontoskills.lock")
    pkg = lock.packages["acme/tools"]
    assert lock.registries[pkg.registry].kind == kind
    locked = {f.path: (f.sha256, f.size, f.executable) for f in pkg.files}
    for f in manifest["files"]:  # the published hashes are what got installed and locked
        assert locked[f["path"]] == (f["sha256"], f["size"], f["executable"])
        data = (home / "ontologies/author/acme/tools" / f["path"]).read_bytes()
        assert len(data) == f["size"]
    return pkg


def test_folder_round_trip(
    tmp_path: Path, cli: CliRunner, folder_registry: Path, env: dict[str, str]
) -> None:
    manifest = _published(tmp_path, cli, folder_registry)
    cli("--registry", str(folder_registry), "install", "acme/tools", check=True)
    _check_installed(env, manifest, "folder")
    tampered = folder_registry / "packages/acme/tools/lint/ontoskill.ttl"
    tampered.write_text(tampered.read_text() + "\n# edited after publishing\n")
    cli("remove", "acme/tools", check=True)
    # read from the registry again: the verified store would satisfy the published hash
    shutil.rmtree(env["ONTOSKILLS_CACHE_DIR"])
    proc = cli("--registry", str(folder_registry), "install", "acme/tools")
    assert proc.returncode == 4, proc.stderr  # the published hash no longer matches


@pytest.mark.skipif(
    importlib.util.find_spec("ontoskills.sources.git") is None, reason="needs the git source"
)
def test_git_round_trip_and_ci_keeps_the_pinned_commit(
    tmp_path: Path, cli: CliRunner, git_registry: Path, env: dict[str, str]
) -> None:
    old = _published(tmp_path, cli, git_registry, "1.0.0")
    cli("--registry", str(git_registry), "install", "acme/tools", check=True)
    pinned = _check_installed(env, old, "git")
    assert pinned.commit and pinned.version == "1.0.0"
    _published(tmp_path, cli, git_registry, "1.1.0")
    cli("ci", check=True)
    home = Path(env["ONTOSKILLS_HOME"])
    installed = json.loads((home / "ontologies/author/acme/tools/package.json").read_text())
    assert installed["version"] == "1.0.0"
    again = _check_installed(env, old, "git")
    assert again.commit == pinned.commit


@pytest.mark.skipif(
    importlib.util.find_spec("ontoskills.sources.http") is None, reason="needs the HTTP source"
)
def test_http_round_trip(
    tmp_path: Path, cli: CliRunner, folder_registry: Path, env: dict[str, str], httpserver
) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.http import serve_folder

    manifest = _published(tmp_path, cli, folder_registry)
    url = serve_folder(httpserver, folder_registry)
    cli("--registry", url, "install", "acme/tools", check=True)
    _check_installed(env, manifest, "http")
    home = Path(env["ONTOSKILLS_HOME"])
    assert (home / "ontologies/author/acme/tools/lint/scripts/run.sh").stat().st_mode & 0o100


def test_sparse_registry_from_init_round_trips_over_http(
    tmp_path: Path, cli: CliRunner, env: dict[str, str], httpserver
) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.http import serve_folder

    registry = tmp_path / "sparse-reg"
    proc = cli("registry", "init", str(registry), "--sparse", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((registry / "index/config.json").read_text())["packages"] == 0
    assert not pygit2.Repository(str(registry)).status()  # index/ is committed too
    manifest = _published(tmp_path, cli, registry)
    entry = json.loads((registry / "index/acme/tools.json").read_text())
    assert entry["package_id"] == "acme/tools"
    log: list[str] = []
    url = serve_folder(httpserver, registry, log=log)
    cli("--registry", url, "install", "acme/tools", check=True)
    _check_installed(env, manifest, "http")
    assert "/index/acme/tools.json" in log and "/index.json" not in log  # one entry, not all
