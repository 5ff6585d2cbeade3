"""install/ci/update from git registries (real local repositories), in-process (the domain;
exit codes are the raised exception's). The autocrlf case runs the CLI in a subprocess:
libgit2 reads the user's global git config (HOME) once per process."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from ontoskills import lockfile
from ontoskills.errors import NetworkError, UnsafePathError
from tests.conftest import CliRunner
from tests.helpers.domain import Domain
from tests.helpers.gittree import commit_entries
from tests.helpers.registry import build_registry, commit_all, sample_packages

PKG = "ontologies/author/acme/devtools"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = build_registry(tmp_path / "gitreg", sample_packages())
    commit_all(path, "registry")
    return path


def _lock(home: Path) -> lockfile.Lockfile:
    return lockfile.load(home / "ontoskills.lock")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_autocrlf_true_or_false_gives_the_same_hashes(
    cli: CliRunner, repo: Path, tmp_path: Path
) -> None:
    blobs = pygit2.Repository(str(repo)).revparse_single("HEAD:packages/acme/devtools")
    locks = {}
    for autocrlf in ("true", "false"):
        # both in the registry repo's config and in the user's global gitconfig
        pygit2.Repository(str(repo)).config["core.autocrlf"] = autocrlf
        user_home = tmp_path / f"user-{autocrlf}"
        user_home.mkdir()
        (user_home / ".gitconfig").write_text(f"[core]\n\tautocrlf = {autocrlf}\n")
        home = tmp_path / f"home-{autocrlf}"
        cli("--home", str(home), "--registry", str(repo), "install", "acme/devtools", check=True,
            extra_env={"HOME": str(user_home), "XDG_CONFIG_HOME": str(user_home),
                       "ONTOSKILLS_CACHE_DIR": str(tmp_path / f"cache-{autocrlf}")})  # fmt: skip
        installed = _files(home / PKG)
        assert installed["debugging/notes.md"] == b"# notes\r\nwindows line endings\r\n"
        assert installed["debugging/scripts/run.sh"] == b"#!/bin/sh\necho run\n"
        for rel, data in installed.items():
            assert data == blobs[rel].data, rel  # exactly the committed bytes
        locks[autocrlf] = (home / "ontoskills.lock").read_bytes()
    assert locks["true"] == locks["false"]


def test_lock_pins_commit_and_ci_reinstalls_it_after_newer_commits(
    domain: Domain, repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    first = str(pygit2.Repository(str(repo)).head.target)
    domain.install("acme/devtools", registry=str(repo))
    lock = _lock(home)
    pkg = lock.packages["acme/devtools"]
    assert pkg.commit == first and lock.registries[pkg.registry].commit == first
    before = _files(home / PKG)
    (repo / "packages/acme/devtools/LICENSE").write_bytes(b"Apache-2.0\n")
    (repo / "packages/acme/devtools/debugging/scripts/new.sh").write_bytes(b"#!/bin/sh\n")
    second = commit_all(repo, "newer")
    lock_bytes = (home / "ontoskills.lock").read_bytes()

    domain.ci()  # wipes the tree, installs exactly the pinned commit
    assert _files(home / PKG) == before
    assert (home / "ontoskills.lock").read_bytes() == lock_bytes
    fresh = tmp_path / "fresh"
    Domain(fresh, home / "ontoskills.lock", cache=tmp_path / "cold").ci()
    assert _files(fresh / PKG) == before
    domain.install(frozen=True)
    assert _files(home / PKG) == before

    domain.update("acme/devtools")  # update moves to the new commit
    assert _lock(home).packages["acme/devtools"].commit == second
    assert (home / PKG / "LICENSE").read_bytes() == b"Apache-2.0\n"


@pytest.mark.parametrize("kind", ["symlink", "submodule"])
def test_symlink_or_submodule_in_tree_exit_4_nothing_written(
    domain: Domain, repo: Path, env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/design", registry=str(repo))
    lock_before = (home / "ontoskills.lock").read_bytes()
    tree_before = _files(home / "ontologies")
    if kind == "symlink":
        entry = {"passwd": (b"/etc/passwd", FileMode.LINK)}
    else:
        sub = build_registry(tmp_path / "sub", [])
        entry = {"vendored": (commit_all(sub), FileMode.COMMIT)}
    commit_entries(repo, "packages/acme/devtools/debugging", entry)
    with pytest.raises(UnsafePathError) as err:
        domain.install("acme/devtools", registry=str(repo))
    assert err.value.exit_code == 4
    assert kind in err.value.message
    assert (home / "ontoskills.lock").read_bytes() == lock_before
    assert _files(home / "ontologies") == tree_before
    assert not (home / PKG).exists()


def test_git_offline_warm_and_cold(
    domain: Domain, repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(NetworkError) as err:
        Domain(registry=str(repo), offline=True).install("acme/design")
    assert err.value.exit_code == 5 and "offline" in f"{err.value.message} {err.value.hint}"
    domain.install("acme/design", registry=str(repo))
    Domain(tmp_path / "h2", registry=str(repo), offline=True).install("acme/design")
