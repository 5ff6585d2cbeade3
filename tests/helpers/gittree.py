"""Write raw tree entries into a git repository (symlinks, submodules) as a hostile repo would."""

from __future__ import annotations

from pathlib import Path

import pygit2
from pygit2.enums import FileMode


def commit_entries(
    repo_path: Path, folder: str, entries: dict[str, tuple[pygit2.Oid | str | bytes, FileMode]]
) -> str:
    """Commit `entries` (name -> (blob bytes | object id, mode)) into `folder` on top of HEAD.

    bytes become a new blob; an id (str/Oid) is used as is (e.g. a submodule's commit).
    """
    repo = pygit2.Repository(str(repo_path))
    head = repo[repo.head.target].peel(pygit2.Commit)
    parts = [p for p in folder.split("/") if p]
    trees = [head.tree]
    for i in range(len(parts)):
        trees.append(repo.revparse_single(f"HEAD:{'/'.join(parts[: i + 1])}"))
    builder = repo.TreeBuilder(trees[-1])
    for name, (value, mode) in entries.items():
        if isinstance(value, bytes):
            oid = repo.create_blob(value)
        else:
            oid = value if isinstance(value, pygit2.Oid) else pygit2.Oid(hex=value)
        builder.insert(name, oid, mode)
    oid = builder.write()
    for depth in range(len(parts) - 1, -1, -1):  # rebuild each parent up to the root
        parent = repo.TreeBuilder(trees[depth])
        parent.insert(parts[depth], oid, FileMode.TREE)
        oid = parent.write()
    sig = pygit2.Signature("Test", "test@example.invalid", 1_700_000_000, 0)
    return str(repo.create_commit("HEAD", sig, sig, "raw entries", oid, [head.id]))
