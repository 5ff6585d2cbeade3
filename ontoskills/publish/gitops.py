"""The git side of publishing (pygit2): author, commit, clone and push a publish branch.

Credentials come from the environment only (ONTOSKILLS_TOKEN, GITHUB_TOKEN for GitHub hosts),
through the git source's `TokenCallbacks` (sources/_gitremote.py), never on a command line or
in a URL that could be logged. A push that the remote rejects is an error, not a silent no-op.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..errors import NetworkError, OntoskillsError, UsageError
from ..sources._gitremote import TokenCallbacks, git_error


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
    """Stage exactly `pathspecs` (additions, changes and deletions) and commit on HEAD."""
    index = repo.index
    index.read()
    index.remove_all(pathspecs)  # entries whose files are gone must go too
    index.add_all(pathspecs)
    index.write()
    tree = index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    if parents and repo[parents[0]].tree_id == tree:
        raise UsageError("nothing to commit: the registry already holds this content")
    sig = author.signature()
    return str(repo.create_commit("HEAD", sig, sig, message, tree, parents))


class _PushCallbacks(TokenCallbacks):
    """The sources' token callbacks plus the per-reference verdict of a push."""

    def __init__(self, remote_url: str) -> None:
        super().__init__(remote_url)
        self.rejected: dict[str, str] = {}

    def push_update_reference(self, refname, message):  # type: ignore[no-untyped-def]
        if message:
            self.rejected[refname] = message


def clone(url: str, dest: Path) -> pygit2.Repository:
    try:
        return pygit2.clone_repository(url, str(dest), callbacks=TokenCallbacks(url))
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
