"""The git side of publishing (pygit2): author, commit, clone and push a publish branch.

Credentials come from the environment only (ONTOSKILLS_TOKEN, GITHUB_TOKEN for GitHub hosts),
through the git source's `TokenCallbacks` (sources/_gitremote.py), never on a command line or
in a URL that could be logged. A push that the remote rejects is an error, not a silent no-op.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..errors import IntegrityError, NetworkError, OntoskillsError, UsageError
from ..sources._auth import token_origins
from ..sources._gitremote import TokenCallbacks, git_error
from . import gitcas


@dataclass(frozen=True)
class Author:
    name: str
    email: str

    def signature(self) -> pygit2.Signature:
        return pygit2.Signature(self.name, self.email)


def is_repo(path: Path) -> bool:
    return pygit2.discover_repository(str(path)) is not None and (path / ".git").exists()


def is_bare_repo(path: Path) -> bool:
    return (
        (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()
    )


def init_repo(path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(path), initial_head="main")


def author_for(
    repo: pygit2.Repository | None, name: str | None = None, email: str | None = None
) -> Author:
    """Flags, then GIT_AUTHOR_NAME/EMAIL, then git config (repo, then global)."""
    name = name or os.environ.get("GIT_AUTHOR_NAME")
    email = email or os.environ.get("GIT_AUTHOR_EMAIL")
    if not (name and email):
        try:
            config = repo.config if repo is not None else pygit2.Config.get_global_config()
        except (OSError, pygit2.GitError):  # no ~/.gitconfig at all
            config = None
        if config is not None:
            name = name or _config_value(config, "user.name")
            email = email or _config_value(config, "user.email")
    if not (name and email):
        raise UsageError(
            "no git author for the registry commit",
            hint="pass --author-name/--author-email, set GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, "
            "or `git config --global user.name/user.email`",
        )
    return Author(name, email)


def _config_value(config: pygit2.Config, key: str) -> str | None:
    try:
        value = config[key]
    except (KeyError, pygit2.GitError):
        return None
    return str(value) if value else None


def commit_paths(
    repo: pygit2.Repository, pathspecs: list[str], message: str, author: Author
) -> str:
    """Stage exactly `pathspecs` from the work tree and commit on HEAD (`registry init` only:
    its files are our own; a publish commits exact bytes with `build_tree` + `commit_tree`)."""
    files: dict[str, TreeFile] = {}
    base = gitcas.read_base(repo)
    for spec in pathspecs:
        root = Path(repo.workdir) / spec
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            rel = path.relative_to(repo.workdir).as_posix()
            files[rel] = TreeFile(repo.create_blob(path.read_bytes()), _MODE_FILE)
    tree = build_tree(repo, pathspecs, files, base)
    commit = commit_tree(repo, tree, pathspecs, files, message, author, base)
    gitcas.done(repo)  # the work tree already holds these files
    return commit


def commit_bytes(
    repo: pygit2.Repository,
    files: dict[str, bytes],
    message: str,
    author: Author,
    base: gitcas.Base,
    write: Callable[[], None],
) -> str:
    """Commit exactly `files` (path -> bytes) on `base`: blobs from those bytes, the tree
    read back against them, the branch moved only if still at `base` (gitcas); then `write`
    puts the same bytes in the work tree (signed metadata, `registry init --signed`)."""
    blobs = {rel: TreeFile.of(repo, body) for rel, body in files.items()}
    prefixes = sorted(files)
    tree = build_tree(repo, prefixes, blobs, base)
    verify_tree(repo, tree, prefixes, {r: Expected.of(b) for r, b in files.items()})
    commit = commit_tree(repo, tree, prefixes, blobs, message, author, base)
    write()
    gitcas.done(repo)
    return commit


@dataclass(frozen=True)
class TreeFile:
    """One blob to commit: its id (written from bytes we hashed) and its mode."""

    oid: pygit2.Oid
    mode: int

    @staticmethod
    def of(repo: pygit2.Repository, data: bytes, executable: bool = False) -> TreeFile:
        # create_blob() stores the bytes as given: no .gitattributes filter, no eol conversion,
        # no core.autocrlf, and .gitignore / info/exclude are never consulted.
        return TreeFile(repo.create_blob(data), _MODE_EXEC if executable else _MODE_FILE)


_MODE_FILE = int(pygit2.enums.FileMode.BLOB)
_MODE_EXEC = int(pygit2.enums.FileMode.BLOB_EXECUTABLE)


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def head_tree(repo: pygit2.Repository) -> pygit2.Tree | None:
    return None if repo.head_is_unborn else repo.head.peel(pygit2.Commit).tree


def build_tree(
    repo: pygit2.Repository,
    prefixes: list[str],
    files: dict[str, TreeFile],
    base: gitcas.Base | None = None,
) -> pygit2.Oid:
    """The tree of `base` (the commit the command read; HEAD when None) with everything
    under `prefixes` replaced by exactly `files`.

    Built in an in-memory index, never through the work tree or the repository's index, so
    nothing the registry's git configuration says can drop or rewrite a file."""
    index = pygit2.Index()
    tree = head_tree(repo) if base is None else base.tree(repo)
    if tree is not None:
        index.read_tree(tree)
    for path in [e.path for e in index if _under(e.path, prefixes)]:
        index.remove(path)
    try:
        for path, f in sorted(files.items()):
            index.add(pygit2.IndexEntry(path, f.oid, pygit2.enums.FileMode(f.mode)))
        return index.write_tree(repo)
    except (pygit2.GitError, ValueError) as exc:  # e.g. a file where a folder must go
        raise IntegrityError(
            f"cannot build the registry commit: {exc}",
            hint="the registry's tree has a file where a package folder must go; fix it first",
        ) from None


def tree_files(repo: pygit2.Repository, tree_id: pygit2.Oid, prefix: str) -> dict[str, Expected]:
    """sha256, size and exec bit of every entry under `prefix` (a folder or one file) of a tree,
    read back from the object database. A symlink or submodule is reported as such."""
    tree = repo[tree_id]
    assert isinstance(tree, pygit2.Tree)
    try:
        obj = tree[prefix]
    except KeyError:
        return {}
    out: dict[str, Expected] = {}
    stack: list[tuple[str, pygit2.Object, int]] = [(prefix, obj, int(obj.filemode))]
    while stack:
        path, node, mode = stack.pop()
        if isinstance(node, pygit2.Tree):
            stack.extend((f"{path}/{c.name}", c, int(c.filemode)) for c in node)
        elif isinstance(node, pygit2.Blob) and mode in (_MODE_FILE, _MODE_EXEC):
            data = node.data
            out[path] = Expected(hashlib.sha256(data).hexdigest(), len(data), mode == _MODE_EXEC)
        else:
            out[path] = Expected("not a regular file", -1, False)
    return out


@dataclass(frozen=True)
class Expected:
    sha256: str
    size: int
    executable: bool

    @staticmethod
    def of(data: bytes, executable: bool = False) -> Expected:
        return Expected(hashlib.sha256(data).hexdigest(), len(data), executable)


def verify_tree(
    repo: pygit2.Repository, tree_id: pygit2.Oid, prefixes: list[str], want: dict[str, Expected]
) -> None:
    """Every file under `prefixes` in the tree is exactly `want` (bytes, size, exec bit), no
    more, no less; else IntegrityError naming the first differences."""
    got: dict[str, Expected] = {}
    for prefix in prefixes:
        try:
            got.update(tree_files(repo, tree_id, prefix))
        except pygit2.GitError as exc:  # e.g. a planted object whose content fails its hash
            raise IntegrityError(
                f"the registry's git objects under {prefix} cannot be read back: {exc}",
                hint="nothing was written; the registry's .git/objects is corrupt or tampered "
                "with: run `git fsck` there",
            ) from None
    wrong = sorted(p for p in set(got) | set(want) if got.get(p) != want.get(p))
    if wrong:
        raise IntegrityError(
            f"the registry commit would not hold the exact published bytes: {', '.join(wrong[:5])}"
            + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""),
            hint="nothing was written; report this with the registry's .gitattributes",
        )


def commit_tree(
    repo: pygit2.Repository,
    tree: pygit2.Oid,
    prefixes: list[str],
    files: dict[str, TreeFile],
    message: str,
    author: Author,
    base: gitcas.Base | None = None,
) -> str:
    """Commit `tree` on `base` (HEAD when None) and move the branch to it only if it still
    points at `base` (`gitcas.swap`: else RegistryChangedError, nothing written); the index
    agrees with the commit for `prefixes` in the same step (so `git status` shows the publish
    as committed). The caller writes the work tree, then `gitcas.done`."""
    base = base or gitcas.read_base(repo)
    base_tree = base.tree(repo)
    if base_tree is not None and base_tree.id == tree:
        raise UsageError("nothing to commit: the registry already holds this content")
    sig = author.signature()
    parents = [] if base.commit is None else [base.commit]
    commit = repo.create_commit(None, sig, sig, message, tree, parents)
    entries = {path: (f.oid, f.mode) for path, f in files.items()}
    gitcas.swap(repo, base, commit, message, prefixes, entries)
    return str(commit)


def checkout_warnings(repo: pygit2.Repository, paths: list[str]) -> list[str]:
    """The commit holds the exact bytes; say when this registry's git settings would make a
    git CHECKOUT of it (or an archive) differ, since folder and HTTP mirrors serve a checkout."""
    autocrlf = _config_value(repo.config, "core.autocrlf")
    hits: dict[str, list[str]] = {}
    for path in paths:
        try:
            text, eol = repo.get_attr(path, "text"), repo.get_attr(path, "eol")
            why = [
                name
                for name, on in (
                    ("filter", isinstance(repo.get_attr(path, "filter"), str)),
                    ("ident", repo.get_attr(path, "ident") is True),
                    ("working-tree-encoding", repo.get_attr(path, "working-tree-encoding")),
                    ("text/eol", text in (True, "auto") or isinstance(eol, str)),
                    ("core.autocrlf", text is not False and autocrlf in ("true", "input")),
                    ("export-ignore", repo.get_attr(path, "export-ignore") is True),
                )
                if on
            ]
        except pygit2.GitError:
            continue
        for name in why:
            hits.setdefault(name, []).append(path)
    return [
        f"the registry's git settings ({name}) apply to {len(p)} published file(s) "
        f"({', '.join(p[:3])}{', ...' if len(p) > 3 else ''}): the commit holds the exact bytes, "
        "but a git checkout or archive of it may not; add `packages/** -text -filter -ident "
        "-export-ignore` (and `index.json`, `index/**`) to .gitattributes"
        for name, p in sorted(hits.items())
    ]


class _PushCallbacks(TokenCallbacks):
    """The sources' token callbacks plus the per-reference verdict of a push."""

    def __init__(self, remote_url: str) -> None:
        super().__init__(remote_url, origins=_push_origins(remote_url))
        self.rejected: dict[str, str] = {}

    def push_update_reference(self, refname, message):  # type: ignore[no-untyped-def]
        if message:
            self.rejected[refname] = message


def _push_origins(url: str) -> frozenset[tuple[str, str, int | None]]:
    """The remote `publish --registry` names on its own command line is where the maintainer
    asked to push: its origin may have ONTOSKILLS_TOKEN (never one only a lock names)."""
    return token_origins([url])


def clone(url: str, dest: Path) -> pygit2.Repository:
    try:
        return pygit2.clone_repository(
            url, str(dest), callbacks=TokenCallbacks(url, origins=_push_origins(url))
        )
    except (pygit2.GitError, ValueError, OntoskillsError) as exc:
        raise git_error(exc, url, "clone") from None


def push_branch(repo: pygit2.Repository, url: str, branch: str, commit: str) -> None:
    """Create refs/heads/<branch> at commit and push it; refuse to overwrite a remote branch."""
    ref = f"refs/heads/{branch}"
    repo.references.create(ref, pygit2.Oid(hex=commit), force=True)
    callbacks = _PushCallbacks(url)
    try:
        repo.remotes["origin"].push([ref], callbacks=callbacks)
    except (pygit2.GitError, ValueError, OntoskillsError) as exc:
        if "fastforward" in str(exc) or "fast-forward" in str(exc):
            callbacks.rejected[ref] = str(exc)
        else:
            raise git_error(exc, url, "push") from None
    if callbacks.rejected:
        raise NetworkError(
            f"the remote refused the push of {branch}: {callbacks.rejected.get(ref)}",
            hint="a branch with this name may already exist: bump the version",
        )
