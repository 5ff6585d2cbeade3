"""The same registry served over HTTP, as a folder and as a git repo gives the same lock.

Only the [registries] entry (kind, url, commit or index digest) and the per-package git
`commit` may differ: every installed file, hash, size, exec bit and tier must match.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ontoskills import lockfile
from tests.conftest import shared_path
from tests.helpers.domain import Domain
from tests.helpers.faults import FaultServer
from tests.helpers.registry import build_registry, commit_all, sample_packages


def add_files_arrays(root: Path) -> None:
    """What our publishing writes: a `files` array in each manifest (path, sha256, size, exec)."""
    for manifest in sorted(root.glob("packages/*/*/package.json")):
        pkg = manifest.parent
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["files"] = [
            {
                "path": p.relative_to(pkg).as_posix(),
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                "size": p.stat().st_size,
                "executable": bool(p.stat().st_mode & 0o100),
            }
            for p in sorted(pkg.rglob("*"))
            if p.is_file() and p != manifest
        ]
        manifest.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def packages_section(lock_path: Path) -> str:
    """The [packages] part of a lock, without git's per-package commit lines."""
    text = lock_path.read_text(encoding="utf-8")
    section = text[text.index("[packages.") :]
    return re.sub(r'(?m)^commit = "[0-9a-f]{40}"\n', "", section)


Installer = Callable[[Path, list[str]], dict[str, Path]]


@pytest.fixture
def three_ways(env: dict[str, str], tmp_path: Path) -> Installer:
    """install(registry, packages) -> {kind: home}: one fresh home per source kind."""

    def run(reg: Path, packages: list[str]) -> dict[str, Path]:
        git_copy = tmp_path / "git-registry"
        shutil.copytree(reg, git_copy)
        commit_all(git_copy, "registry")
        homes: dict[str, Path] = {}
        with FaultServer(reg) as srv:
            for kind, url in (("http", srv.url), ("folder", str(reg)), ("git", str(git_copy))):
                home = tmp_path / f"home-{kind}"
                domain = Domain(home)
                domain.add_registry("store", url)
                domain.install(*packages)
                homes[kind] = home
        return homes

    return run


def _assert_same(homes: dict[str, Path]) -> None:
    sections = {k: packages_section(h / "ontoskills.lock") for k, h in homes.items()}
    assert sections["http"] == sections["folder"] == sections["git"]
    kinds = {
        k: lockfile.load(h / "ontoskills.lock").registries["store"].kind for k, h in homes.items()
    }
    assert kinds == {"http": "http", "folder": "folder", "git": "git"}
    trees = {
        k: {
            p.relative_to(h).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o111)
            for p in (h / "ontologies/author").rglob("*")
            if p.is_file()
        }
        for k, h in homes.items()
    }
    assert trees["http"] == trees["folder"] == trees["git"]


def test_synthetic_registry_same_lock_over_http_folder_git(
    three_ways,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    packages = sample_packages()
    for spec in packages:
        spec.files_array = True
    reg = build_registry(tmp_path / "reg", packages)
    homes = three_ways(reg, ["acme/devtools", "acme/design/colorize"])
    _assert_same(homes)
    lock = lockfile.load(homes["git"] / "ontoskills.lock")
    assert lock.registries["store"].commit and lock.packages["acme/devtools"].commit


@pytest.mark.shared
def test_superpowers_same_lock_three_ways_and_ci_reproduces(
    three_ways,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    store = shared_path("ontostore")
    reg = tmp_path / "store"  # a scratch copy, republished with `files` arrays
    shutil.copytree(store, reg)
    add_files_arrays(reg)
    homes = three_ways(reg, ["obra/superpowers"])
    _assert_same(homes)
    lock_path = homes["git"] / "ontoskills.lock"
    pkg = lockfile.load(lock_path).packages["obra/superpowers"]
    assert pkg.trust_tier == "official"
    source = reg / "packages/obra/superpowers"
    on_disk = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}
    on_disk = {p for p in on_disk if not p.endswith("intents.json")}  # not --with-embeddings
    assert {f.path for f in pkg.files} == on_disk
    assert all(len(f.sha256) == 64 for f in pkg.files)
    assert pkg.file("brainstorming/scripts/start-server.sh").executable  # type: ignore[union-attr]
    # ci in an empty home with a cold cache reproduces the tree exactly
    empty = tmp_path / "empty"
    Domain(empty, lock_path, cache=tmp_path / "cold").ci()
    want = homes["git"] / "ontologies/author/obra/superpowers"
    got = empty / "ontologies/author/obra/superpowers"
    for f in pkg.files:
        assert (got / f.path).read_bytes() == (want / f.path).read_bytes()
        assert bool((got / f.path).stat().st_mode & 0o100) == f.executable


@pytest.mark.shared
def test_superpowers_raw_store_over_http_gets_the_listed_files(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The published store has no `files` arrays: HTTP can only fetch what manifests list,
    and those files must be byte-identical to what the folder source installs."""
    store = shared_path("ontostore")
    # Configured registries: an ad-hoc --registry is capped at community (docs/CLI.md "Trust
    # of a registry"), and this test compares the index's own tier over both sources.
    with FaultServer(store) as srv:
        over = Domain(tmp_path / "h")
        over.add_registry("store", srv.url)
        over.install("obra/superpowers")
    folder_home = Domain(tmp_path / "f")
    folder_home.add_registry("store", store)
    folder_home.install("obra/superpowers")
    over_http = lockfile.load(tmp_path / "h/ontoskills.lock").packages["obra/superpowers"]
    folder = lockfile.load(tmp_path / "f/ontoskills.lock").packages["obra/superpowers"]
    assert over_http.trust_tier == folder.trust_tier == "official"
    by_path = {f.path: f for f in folder.files}
    assert over_http.files and all(by_path[f.path] == f for f in over_http.files)
    assert len(over_http.files) < len(folder.files)  # unlisted assets need git or folder
