"""Issue 13 class 2: `publish` commits exactly the bytes it hashed, whatever the registry's own
git settings say (.gitattributes eol/text/ident/filter, .gitignore, info/exclude,
core.autocrlf/safecrlf), verifies the commit's tree against the manifest before it reports
success, and a mismatch leaves HEAD, the index and the work tree as they were. The published
package then installs over git, folder and HTTP."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from ontoskills import lockfile
from ontoskills.errors import IntegrityError, OntoskillsError
from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import init_registry
from ontoskills.publish.worktree import worktree_differences
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.gitsettings import ALL, HOSTILE_GIT, add_tricky_assets, make_hostile
from tests.publish.conftest import AUTHOR, GIT_ENV, make_package


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


PKG = "packages/acme/tools"


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The commit author from the environment, never from the machine's git config."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    return dict(GIT_ENV)


def _manifest_files(pkg: Path) -> dict[str, tuple[str, int, bool]]:
    doc = json.loads((pkg / "package.json").read_bytes())
    out = {f["path"]: (f["sha256"], f["size"], f["executable"]) for f in doc["files"]}
    data = (pkg / "package.json").read_bytes()
    out["package.json"] = (hashlib.sha256(data).hexdigest(), len(data), False)
    return out


def _head_files(reg: Path, prefix: str = PKG) -> dict[str, tuple[str, int, bool]]:
    """What a git client reads: the blobs of HEAD's tree, straight from the object database."""
    repo = pygit2.Repository(str(reg))
    tree = repo.head.peel(pygit2.Commit).tree
    out: dict[str, tuple[str, int, bool]] = {}

    def walk(node: pygit2.Tree, base: str) -> None:
        for child in node:
            rel = f"{base}{child.name}"
            if isinstance(child, pygit2.Tree):
                walk(child, rel + "/")
            else:
                assert isinstance(child, pygit2.Blob)
                exe = child.filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE
                out[rel] = (hashlib.sha256(child.data).hexdigest(), len(child.data), exe)

    sub = tree[prefix]
    if isinstance(sub, pygit2.Blob):
        return {prefix: (hashlib.sha256(sub.data).hexdigest(), len(sub.data), False)}
    assert isinstance(sub, pygit2.Tree)
    walk(sub, "")
    return out


def _git_state(reg: Path) -> tuple[str, bytes, dict[str, bytes]]:
    """HEAD, the index file and the work tree (everything outside .git)."""
    repo = pygit2.Repository(str(reg))
    head = str(repo.head.target)
    work = {
        p.relative_to(reg).as_posix(): p.read_bytes()
        for p in sorted(reg.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(reg).parts[:1]
    }
    return head, (reg / ".git" / "index").read_bytes(), work


def _hostile_registry(tmp: Path, names: tuple[str, ...]) -> Path:
    reg = tmp / "registry"
    init_registry(reg, git=True, author=AUTHOR)
    make_hostile(reg, names)
    return reg


@pytest.mark.parametrize("setting", sorted(HOSTILE_GIT))
def test_each_git_setting_cannot_drop_or_rewrite_a_published_file(
    setting: str, tmp_path: Path, git_env: dict[str, str]
) -> None:
    reg = _hostile_registry(tmp_path, (setting,))
    pkg = add_tricky_assets(make_package(tmp_path))
    result = publish(pkg, PublishOptions(registry=str(reg)))
    assert result.commit is not None
    assert _head_files(reg) == _manifest_files(pkg), setting
    index_blob = _head_files(reg, "index.json")
    assert index_blob  # HEAD's index.json is the bytes on disk, which name the package
    assert (
        index_blob["index.json"][0] == hashlib.sha256((reg / "index.json").read_bytes()).hexdigest()
    )
    assert worktree_differences(reg) == [], "the work tree holds the commit's exact bytes"
    if setting in ("eol-crlf", "text-auto", "eol-lf", "ident", "filter", "export-ignore"):
        assert any(setting.split("-")[0] in w or "text/eol" in w for w in result.warnings), (
            result.warnings
        )


def test_all_settings_at_once_then_install_over_git_folder_and_http(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = _hostile_registry(tmp_path, ALL)
    pkg = add_tricky_assets(make_package(tmp_path))
    proc = cli("publish", str(pkg), "--registry", str(reg), "--json", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    want = _manifest_files(pkg)
    assert _head_files(reg) == want
    verify = cli("registry", "verify", str(reg), "--json")
    assert verify.returncode == 0, verify.stdout
    assert json.loads(verify.stdout)["summary"]["errors"] == 0
    with FaultServer(reg) as srv:
        for n, where in enumerate((str(reg), "wt", srv.url)):
            home = tmp_path / f"home{n}"
            # folder: the checkout's work tree itself, read as a folder registry
            cli(
                "--home",
                str(home),
                "registry",
                "add",
                "wt",
                str(reg),
                "--kind",
                "folder",
                check=True,
            )
            cli("--home", str(home), "--registry", where, "install", "acme/tools", check=True)
            lock = lockfile.load(home / "ontoskills.lock")
            got = {
                f.path: (f.sha256, f.size, f.executable) for f in lock.packages["acme/tools"].files
            }
            assert got == want, where
            root = home / "ontologies/author/acme/tools"
            for rel, (sha, _, _) in want.items():
                assert hashlib.sha256((root / rel).read_bytes()).hexdigest() == sha, (where, rel)


def test_a_remote_with_hostile_attributes_gets_the_exact_bytes_on_its_branch(
    tmp_path: Path, cli: CliRunner
) -> None:
    work = _hostile_registry(tmp_path, ("eol-crlf", "gitignore-dirs", "ident"))
    bare = tmp_path / "remote.git"
    pygit2.clone_repository(str(work), str(bare), bare=True)
    pkg = add_tricky_assets(make_package(tmp_path))
    proc = cli("publish", str(pkg), "--registry", str(bare), "--json", extra_env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    branch = json.loads(proc.stdout)["branch"]
    repo = pygit2.Repository(str(bare))
    commit = repo.references[f"refs/heads/{branch}"].peel(pygit2.Commit)
    check = tmp_path / "check"
    pygit2.clone_repository(str(bare), str(check), checkout_branch=branch)
    assert str(pygit2.Repository(str(check)).head.target) == str(commit.id)
    assert _head_files(check) == _manifest_files(pkg)


def _poison(reg: Path, data: bytes) -> None:
    """Plant a loose object at the id of `data` whose content is something else: libgit2's
    create_blob() sees the id exists and keeps it; a reader gets a hash mismatch."""
    oid = str(pygit2.hash(data))
    path = reg / ".git" / "objects" / oid[:2] / oid[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    evil = b"#!/bin/sh\nrm -rf ~\n"
    path.write_bytes(zlib.compress(b"blob %d\x00" % len(evil) + evil))


def test_a_tree_that_does_not_read_back_exactly_is_refused_and_nothing_moves(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    reg = _hostile_registry(tmp_path, ("gitignore",))
    pkg = add_tricky_assets(make_package(tmp_path))
    _poison(reg, (pkg / "lint/scripts/run.sh").read_bytes())
    before = _git_state(reg)
    with pytest.raises(IntegrityError) as err:
        publish(pkg, PublishOptions(registry=str(reg)))
    assert "lint/scripts/run.sh" in err.value.message or "cannot be read back" in err.value.message
    assert err.value.exit_code == 4
    assert _git_state(reg) == before, "HEAD, index and work tree are as they were"
    assert not list((reg / "packages").rglob(".tools.publish-*"))


def test_a_folder_registry_gets_the_exact_bytes_too(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    reg = tmp_path / "registry"
    init_registry(reg, git=False)
    (reg / ".gitattributes").write_text("* text eol=crlf\n")  # inert without git: stays inert
    pkg = add_tricky_assets(make_package(tmp_path))
    publish(pkg, PublishOptions(registry=str(reg)))
    for rel, (sha, size, exe) in _manifest_files(pkg).items():
        path = reg / PKG / rel
        data = path.read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (sha, size), rel
        assert bool(os.stat(path).st_mode & 0o100) == exe, rel


def test_republishing_into_a_hostile_registry_after_a_kill_still_converges(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    """A kill after the swap and index write, before the commit: the re-run commits exact bytes
    (it used to `git add` the work tree, through the filters)."""
    reg = _hostile_registry(tmp_path, ALL)
    pkg = add_tricky_assets(make_package(tmp_path))
    opts = PublishOptions(registry=str(reg))
    publish(pkg, opts)
    want = str(pygit2.Repository(str(reg)).head.peel(pygit2.Commit).tree_id)
    repo = pygit2.Repository(str(reg))
    parent = repo.head.peel(pygit2.Commit).parents[0]
    repo.reset(parent.id, pygit2.enums.ResetMode.SOFT)  # HEAD back, files and index stay
    repo.index.read_tree(parent.tree)
    repo.index.write()
    result = publish(pkg, opts)
    assert result.commit is not None
    assert str(pygit2.Repository(str(reg)).head.peel(pygit2.Commit).tree_id) == want
    assert worktree_differences(reg) == []


def _link_packages_author(reg: Path, outside: Path) -> None:
    (reg / "packages/acme").symlink_to(outside, target_is_directory=True)


def _link_index_dir(reg: Path, outside: Path) -> None:
    (reg / "index").rename(outside / "index-moved")
    (reg / "index").symlink_to(outside, target_is_directory=True)


def _link_sparse_entry(reg: Path, outside: Path) -> None:
    (reg / "index/acme").mkdir(parents=True, exist_ok=True)
    (reg / "index/acme/tools.json").symlink_to(outside / "precious.txt")


def _link_index_json(reg: Path, outside: Path) -> None:
    (outside / "index.json").write_bytes((reg / "index.json").read_bytes())
    (reg / "index.json").unlink()
    (reg / "index.json").symlink_to(outside / "index.json")


@pytest.mark.parametrize(
    "plant", [_link_packages_author, _link_index_dir, _link_sparse_entry, _link_index_json]
)
@pytest.mark.parametrize("git", [False, True])
def test_a_symlink_where_publish_writes_is_refused_and_nothing_outside_changes(
    plant: Callable[[Path, Path], None], git: bool, tmp_path: Path, git_env: dict[str, str]
) -> None:
    """A merged pull request that turns a registry folder into a link must not make the next
    publish write (or delete: the sparse index drops stale files) outside the registry."""
    reg = tmp_path / "registry"
    init_registry(reg, git=git, author=AUTHOR if git else None, sparse=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me\n")
    plant(reg, outside)
    snapshot = {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}
    with pytest.raises(OntoskillsError) as err:
        publish(make_package(tmp_path), PublishOptions(registry=str(reg)))
    assert err.value.exit_code == 4 and "symlink" in err.value.message, err.value.message
    assert {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()} == snapshot
