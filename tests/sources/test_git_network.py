"""GitSource over real smart HTTP (git http-backend on loopback): shallow, pins, tokens."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from ontoskills.errors import AuthError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig
from ontoskills.sources import SourceOptions
from ontoskills.sources._auth import token_origins
from ontoskills.sources.git import GitSource
from tests.conftest import CliRunner
from tests.helpers.githttp import GitHttpServer, bare_copy, push_to
from tests.helpers.registry import build_registry, commit_all, sample_packages


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


LICENSE = "packages/acme/devtools/LICENSE"
TOKEN = "git-token-5150"


@pytest.fixture
def remote(tmp_path: Path) -> tuple[Path, Path, str]:
    """(working repo, served bare repo, first commit) with two commits on main."""
    work = build_registry(tmp_path / "work", sample_packages())
    first = commit_all(work, "first")
    (work / LICENSE).write_bytes(b"v2\n")
    commit_all(work, "second")
    bare = bare_copy(work, tmp_path / "srv" / "reg.git")
    return work, bare, first


def make(url: str, tmp_path: Path, pin: str | None = None, **kw: object) -> GitSource:
    configured = token_origins([url], {"_": ""})  # as if configured with `registry add`
    opts = SourceOptions(cache=Cache(tmp_path / "cache"), token_origins=configured, **kw)  # type: ignore[arg-type]
    return GitSource(RegistryConfig("reg", url, "git"), opts, pin=pin)


def test_shallow_clone_then_new_commits_then_pin_by_id(
    remote: tuple[Path, Path, str], tmp_path: Path
) -> None:
    work, bare, first = remote
    with GitHttpServer(bare.parent) as srv:
        url = srv.url_for("reg.git")
        src = make(url, tmp_path)
        snap = src.load_index()
        clone = pygit2.Repository(str(src.clone_dir))
        assert clone.is_shallow  # depth 1 for network remotes
        assert snap.commit != first
        assert src.read(LICENSE, max_bytes=100) == b"v2\n"

        (work / LICENSE).write_bytes(b"v3\n")
        third = commit_all(work, "third")
        push_to(work, bare)
        assert make(url, tmp_path).load_index().commit == third

        # the first commit is not in the shallow clone: fetched by id (GitHub allows it)
        pinned = make(url, tmp_path, pin=first)
        assert pinned.read(LICENSE, max_bytes=100) == b"MIT\n"
        assert pinned.load_index().commit == first
        refs = pygit2.Repository(str(pinned.clone_dir)).references
        assert f"refs/ontoskills/pins/{first}" in refs  # by id, not by deepening


def test_token_goes_as_basic_auth_and_missing_token_is_auth_error(
    remote: tuple[Path, Path, str], tmp_path: Path
) -> None:
    _, bare, _ = remote
    with GitHttpServer(bare.parent, token=TOKEN) as srv:
        url = srv.url_for("reg.git")
        with pytest.raises(AuthError) as info:
            make(url, tmp_path).load_index()
        assert info.value.exit_code == 6 and "ONTOSKILLS_TOKEN" in (info.value.hint or "")
        with pytest.raises(AuthError) as info:
            make(url, tmp_path, env={"ONTOSKILLS_TOKEN": "wrong"}).load_index()
        assert "refused" in (info.value.hint or "") and "wrong" not in info.value.message
        src = make(url, tmp_path, env={"ONTOSKILLS_TOKEN": TOKEN})
        assert src.read(LICENSE, max_bytes=100) == b"v2\n"
        assert any(r.authorization and r.authorization.startswith("Basic ") for r in srv.requests)


def test_cli_install_from_network_git_and_ci_pinned_after_push(
    cli: CliRunner, remote: tuple[Path, Path, str], tmp_path: Path, env: dict[str, str]
) -> None:
    work, bare, _ = remote
    home = Path(env["ONTOSKILLS_HOME"])
    with GitHttpServer(bare.parent) as srv:
        url = srv.url_for("reg.git")
        cli("registry", "add", "store", url, check=True)
        cli("install", "acme/devtools", check=True)
        lock_bytes = (home / "ontoskills.lock").read_bytes()
        assert b'kind = "git"' in lock_bytes
        (work / LICENSE).write_bytes(b"v3\n")
        commit_all(work, "third")
        push_to(work, bare)
        fresh = tmp_path / "fresh"
        cli("--home", str(fresh), "--lockfile", str(home / "ontoskills.lock"), "ci", check=True,
            extra_env={"ONTOSKILLS_CACHE_DIR": str(tmp_path / "cold")})  # fmt: skip
        assert (fresh / "ontologies/author/acme/devtools/LICENSE").read_bytes() == b"v2\n"
        assert (home / "ontoskills.lock").read_bytes() == lock_bytes
