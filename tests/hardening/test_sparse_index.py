"""Sparse per-package index (ontoskills/sources/sparse.py): same installs and locks as the
full index.json, O(1) requests in the registry's size over HTTP, and the same refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.sources.sparse import CONFIG, write_sparse_index
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.registry import build_registry, commit_all, sample_packages


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _registry(root: Path, sparse: bool = True, extra: int = 50) -> Path:
    build_registry(
        root,
        sample_packages(),
        index_extra=[
            {
                "package_id": f"filler/p{i:03d}",
                "trust_tier": "community",
                "manifest_path": f"packages/filler/p{i:03d}/package.json",
            }
            for i in range(extra)
        ],
    )
    if sparse:
        write_sparse_index(root)
    return root


def _lock_packages(path: Path) -> str:
    """The lock without the registry's URL and digest/commit (those differ by design)."""
    return re.sub(r'(index_sha256|commit|url) = ".*"', "", path.read_text())


@pytest.mark.parametrize("kind", ["folder", "http", "git"])
def test_sparse_install_gives_the_same_lock_as_the_full_index(
    kind: str, cli: CliRunner, tmp_path: Path
) -> None:
    locks = []
    for sparse in (False, True):
        reg = _registry(tmp_path / f"reg-{sparse}" / "reg", sparse)
        if kind == "git":
            commit_all(reg)
        home = tmp_path / f"home-{sparse}"
        with FaultServer(reg) as srv:
            url = srv.url if kind == "http" else str(reg)
            args = ["--home", str(home), "--registry", url]
            cli(*args, "install", "acme/devtools", "acme/design", check=True)
            if kind == "http":
                paths = srv.paths()
                assert ("/index.json" in paths) is not sparse, paths
                if sparse:
                    assert "/index/acme/devtools.json" in paths
            out = cli(*args, "outdated", "--json", check=True)
            assert {r["status"] for r in json.loads(out.stdout)["packages"]} == {"current"}
        assert cli("--home", str(home), "doctor").returncode == 0
        lock = lockfile.load(home / "ontoskills.lock")
        assert lock.packages["acme/design"].trust_tier == "community"  # from the sparse entry
        locks.append(_lock_packages(home / "ontoskills.lock"))
    assert locks[0] == locks[1]


@pytest.mark.parametrize(
    "entry,code",
    [
        ({"package_id": "acme/design", "manifest_path": "packages/acme/design/package.json"}, 4),
        ({"package_id": "acme/devtools", "manifest_path": "../../etc/package.json"}, 4),
        ({"package_id": "acme/devtools", "manifest_path": "/etc/package.json"}, 4),
        ("not an object", 4),
    ],
)
def test_hostile_sparse_entry_is_refused(
    entry: object, code: int, cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _registry(tmp_path / "reg")
    (reg / "index/acme/devtools.json").write_text(json.dumps(entry))
    proc = cli("--registry", str(reg), "install", "acme/devtools")
    assert proc.returncode == code, proc.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()


def test_unknown_package_is_exit_7_with_suggestions(cli: CliRunner, tmp_path: Path) -> None:
    reg = _registry(tmp_path / "reg")
    proc = cli("--registry", str(reg), "install", "acme/devtool")
    assert proc.returncode == 7
    assert "acme/devtools" in proc.stderr  # the full index is read only on a miss


def test_unknown_sparse_version_falls_back_to_the_full_index(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _registry(tmp_path / "reg")
    (reg / CONFIG).write_text('{"sparse_version": 99}')
    (reg / "index/acme/devtools.json").write_text("{ garbage")
    cli("--registry", str(reg), "install", "acme/devtools", check=True)


def test_locked_notices_a_republished_sparse_registry(cli: CliRunner, tmp_path: Path) -> None:
    reg = _registry(tmp_path / "reg")
    # configured: an ad-hoc --registry is capped at community, so the re-tiering below would
    # not change the lock (docs/CLI.md "Trust of a registry")
    cli("registry", "add", "reg", str(reg), check=True)
    cli("install", "acme/design", check=True)
    cli("install", "--locked", check=True)
    index = json.loads((reg / "index.json").read_text())
    index["packages"] = index["packages"][:-1]  # a publish that drops another package ...
    index["packages"][1]["trust_tier"] = "verified"  # ... and re-tiers this one
    assert index["packages"][1]["package_id"] == "acme/design"
    (reg / "index.json").write_text(json.dumps(index))
    write_sparse_index(reg)
    assert not (reg / "index/filler/p049.json").exists()  # stale entries are removed
    proc = cli("install", "acme/design", "--locked")
    assert proc.returncode == 3, proc.stderr


def test_http_offline_uses_cached_sparse_entries(cli: CliRunner, tmp_path: Path) -> None:
    reg = _registry(tmp_path / "reg")
    with FaultServer(reg) as srv:
        cli("--registry", srv.url, "install", "acme/design", check=True)
        cli("--registry", srv.url, "remove", "acme/design", check=True)
        cli("--offline", "--registry", srv.url, "install", "acme/design", check=True)


def test_a_package_missing_from_stale_sparse_files_is_found_in_the_full_index(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _registry(tmp_path / "reg")
    (reg / "index/acme/devtools.json").unlink()  # published to index.json only
    cli("--registry", str(reg), "install", "acme/devtools", check=True)


@pytest.mark.parametrize("git", [False, True])
def test_publish_keeps_a_sparse_registry_in_step(git: bool, cli: CliRunner, tmp_path: Path) -> None:
    from ontoskills.publish.registry import init_registry
    from tests.publish.conftest import AUTHOR, GIT_ENV, make_package

    reg = tmp_path / "registry"
    init_registry(reg, git=git, author=AUTHOR if git else None)
    write_sparse_index(reg)  # the registry opts in
    if git:
        commit_all(reg, "sparse index")
    proc = cli("publish", str(make_package(tmp_path)), "--registry", str(reg), extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((reg / "index/acme/tools.json").read_text())
    assert entry["manifest_path"] == "packages/acme/tools/package.json"
    config = json.loads((reg / CONFIG).read_text())
    assert config["packages"] == 1
    if git:
        import pygit2

        repo = pygit2.Repository(str(reg))
        assert repo.status() == {} or all(not p.startswith("index/") for p in repo.status()), (
            repo.status()
        )
    cli("--home", str(tmp_path / "h"), "--registry", str(reg), "install", "acme/tools", check=True)


def test_s3_style_403_for_a_missing_sparse_entry_is_a_miss(cli: CliRunner, tmp_path: Path) -> None:
    from tests.helpers.faults import Fault

    reg = _registry(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.fail(r"^/index/acme/devtool\.json$", Fault("status", 403), times=None)
        proc = cli("--registry", srv.url, "install", "acme/devtool")
        assert proc.returncode == 7, proc.stderr
        assert "acme/devtools" in proc.stderr


@pytest.mark.parametrize("status", [403, 500, 503])
def test_probe_on_a_plain_registry_is_one_request_then_index_json(
    cli: CliRunner, tmp_path: Path, env: dict[str, str], status: int
) -> None:
    """Hosts that answer 403 (S3) or 5xx for unknown paths must not cost retries or fail."""
    reg = _registry(tmp_path / "plain", sparse=False, extra=0)
    with FaultServer(reg) as srv:
        srv.storm(r"^/index/config\.json$", status, times=None)
        cli("--registry", srv.url, "install", "acme/design", check=True)
        assert srv.paths().count("/" + CONFIG) == 1
        assert "/index.json" in srv.paths()
