"""GitSource against real local repositories built with pygit2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from ontoskills.errors import NetworkError, NotFoundError, UnsafePathError, UsageError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig
from ontoskills.sources import SourceOptions, open_source
from ontoskills.sources.git import GitSource
from tests.helpers.gittree import commit_entries
from tests.helpers.registry import build_registry, commit_all, sample_packages

ROOT = "packages/acme/devtools"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = build_registry(tmp_path / "reg", sample_packages())
    commit_all(path, "first")
    return path


def make(url: str, tmp_path: Path, pin: str | None = None, **kw: object) -> GitSource:
    opts = SourceOptions(cache=Cache(tmp_path / "cache"), **kw)  # type: ignore[arg-type]
    src = open_source(RegistryConfig("reg", url, "git"), opts, pin=pin)
    assert isinstance(src, GitSource)
    return src


def _head(path: Path) -> str:
    return str(pygit2.Repository(str(path)).head.target)


def test_index_and_files_come_from_the_object_database(repo: Path, tmp_path: Path) -> None:
    src = make(str(repo), tmp_path)
    snap = src.load_index()
    assert snap.commit == _head(repo)
    assert snap.sha256 == hashlib.sha256((repo / "index.json").read_bytes()).hexdigest()
    # the working tree is irrelevant: only committed content is served
    (repo / "index.json").write_text("{not json")
    listing = {f.path: f for f in src.list_package(ROOT) or []}
    assert listing["debugging/scripts/run.sh"].executable
    assert not listing["LICENSE"].executable
    assert listing["debugging/notes.md"].size == len(b"# notes\r\nwindows line endings\r\n")
    sha, size = src.fetch_to(f"{ROOT}/debugging/notes.md", tmp_path / "n", max_bytes=1000)
    assert (tmp_path / "n").read_bytes() == b"# notes\r\nwindows line endings\r\n"
    assert sha == hashlib.sha256((tmp_path / "n").read_bytes()).hexdigest() and size == 31
    assert src.clone_dir.is_relative_to(tmp_path / "cache" / "git")
    assert pygit2.Repository(str(src.clone_dir)).is_bare


def test_new_commits_are_fetched_and_pins_read_old_ones(repo: Path, tmp_path: Path) -> None:
    first = _head(repo)
    make(str(repo), tmp_path).load_index()
    (repo / ROOT / "LICENSE").write_bytes(b"Apache-2.0\n")
    second = commit_all(repo, "second")
    fresh = make(str(repo), tmp_path)
    assert fresh.load_index().commit == second
    assert fresh.read(f"{ROOT}/LICENSE", max_bytes=100) == b"Apache-2.0\n"
    pinned = make(str(repo), tmp_path, pin=first)
    assert pinned.load_index().commit == first
    assert pinned.read(f"{ROOT}/LICENSE", max_bytes=100) == b"MIT\n"


def test_pin_missing_from_cache_is_fetched(repo: Path, tmp_path: Path) -> None:
    first = _head(repo)
    src = make(str(repo), tmp_path, pin=first)  # cold cache, pinned: fetch then find it
    assert src.read(f"{ROOT}/LICENSE", max_bytes=100) == b"MIT\n"
    with pytest.raises(NotFoundError):
        make(str(repo), tmp_path, pin="0" * 40).load_index()


def test_ref_fragment_selects_branch_or_tag(repo: Path, tmp_path: Path) -> None:
    r = pygit2.Repository(str(repo))
    first = _head(repo)
    r.references.create("refs/tags/v1", first)
    r.branches.local.create("stable", r[first])
    (repo / ROOT / "LICENSE").write_bytes(b"changed\n")
    commit_all(repo, "second")
    for ref in ("v1", "stable"):
        src = make(f"{repo}#{ref}", tmp_path)
        assert src.load_index().commit == first
    with pytest.raises(NotFoundError):
        make(f"{repo}#nope", tmp_path).load_index()
    with pytest.raises(UsageError):
        make(f"{repo}#..bad", tmp_path)


def test_offline_uses_cached_clone_and_fails_when_cold(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(NetworkError) as info:
        make(str(repo), tmp_path, offline=True).load_index()
    assert "without --offline" in (info.value.hint or "")
    online = make(str(repo), tmp_path).load_index()
    (repo / ROOT / "LICENSE").write_bytes(b"changed\n")
    commit_all(repo, "second")  # not fetched while offline
    assert make(str(repo), tmp_path, offline=True).load_index().commit == online.commit


def test_symlink_and_submodule_entries_are_rejected(repo: Path, tmp_path: Path) -> None:
    sub = build_registry(tmp_path / "sub", [])
    entries = {
        "evil-link": (b"/etc/passwd", FileMode.LINK),
        "vendored": (commit_all(sub), FileMode.COMMIT),
    }
    commit_entries(repo, ROOT, entries)
    src = make(str(repo), tmp_path)
    with pytest.raises(UnsafePathError, match=r"symlink|submodule"):
        src.list_package(ROOT)
    with pytest.raises(UnsafePathError, match="symlink"):
        src.read(f"{ROOT}/evil-link", max_bytes=100)
    with pytest.raises(UnsafePathError, match="submodule"):
        src.read(f"{ROOT}/vendored/x", max_bytes=100)
    assert json.loads(src.read(f"{ROOT}/package.json", max_bytes=1 << 20))["version"] == "1.2.0"


def test_missing_repository_is_not_found(tmp_path: Path) -> None:
    with pytest.raises((NotFoundError, NetworkError)):
        make(str(tmp_path / "nowhere"), tmp_path).load_index()


def test_plain_http_git_remote_refused_off_loopback(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        make("http://git.example.org/reg.git", tmp_path)
