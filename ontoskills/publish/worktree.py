"""What `registry verify` checks on a LOCAL registry beyond what a `BaseSource` reads.

- A git checkout is verified at a commit, but a folder client (`--kind folder`) or a web
  server serving the checkout reads the work tree: any byte, mode or file that differs from
  the verified commit is reported (compared byte for byte, never through git's filters, so
  an eol or ident rule cannot hide a difference or invent one).
- A publisher killed mid-way leaves `.<pkg>.publish-<pid>` / `.<pkg>.old-<pid>` folders and
  `.index.json.*.tmp` files (publish/publish.py); the next publish of that package removes
  them, until then they are reported.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import pygit2

# Paths a client reads (index, sparse index, packages); a difference elsewhere (a README) is
# reported as a warning only.
CLIENT_PREFIXES = ("index.json", "index", "packages", "metadata")  # metadata: TUF
_LEFTOVER = re.compile(r"^\.[^/]+\.(publish|old)-[0-9]+$")
_INDEX_TMP = re.compile(r"^\.index\.json\..*\.tmp$")
_MODE_LINK = int(pygit2.enums.FileMode.LINK)
_MODE_EXEC = int(pygit2.enums.FileMode.BLOB_EXECUTABLE)
_MODE_TREE = int(pygit2.enums.FileMode.TREE)
_MODE_COMMIT = int(pygit2.enums.FileMode.COMMIT)


@dataclass(frozen=True)
class Difference:
    path: str
    what: str  # modified | mode | deleted | untracked | type

    @property
    def client_read(self) -> bool:
        first = self.path.split("/", 1)[0]
        return first in CLIENT_PREFIXES

    def __str__(self) -> str:
        return f"{self.path} ({self.what})"


def is_leftover(rel: str) -> bool:
    """A dead publisher's staging/moved-aside folder or temp index file (by name)."""
    name = rel.rsplit("/", 1)[-1]
    if "/" not in rel:
        return bool(_INDEX_TMP.match(name))
    return rel.startswith("packages/") and bool(_LEFTOVER.match(name))


def leftovers(root: Path) -> list[str]:
    """Registry-relative leftovers of killed publishes, sorted."""
    out = [p.name for p in root.glob(".index.json.*.tmp") if is_leftover(p.name)]
    packages = root / "packages"
    if packages.is_dir() and not packages.is_symlink():
        for author in packages.iterdir():
            if author.is_dir() and not author.is_symlink():
                rel = f"packages/{author.name}"
                out.extend(
                    f"{rel}/{p.name}" for p in author.iterdir() if is_leftover(f"{rel}/{p.name}")
                )
    return sorted(out)


def worktree_differences(root: Path, commit: str | None = None) -> list[Difference]:
    """Every way the work tree of the git checkout at `root` differs from `commit` (HEAD when
    None), byte for byte; leftovers of killed publishes are not counted (see `leftovers`)."""
    repo = pygit2.Repository(str(root))
    target = repo.revparse_single(commit) if commit else repo.head.peel(pygit2.Commit)
    assert isinstance(target, pygit2.Commit)
    committed: dict[str, tuple[str, int]] = {}
    stack: list[tuple[str, pygit2.Tree]] = [("", target.tree)]
    while stack:
        base, tree = stack.pop()
        for child in tree:
            rel = f"{base}{child.name}"
            mode = int(child.filemode)
            if mode == _MODE_TREE:
                assert isinstance(child, pygit2.Tree)
                stack.append((rel + "/", child))
            else:
                committed[rel] = (str(child.id), mode)
    out: list[Difference] = []
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        folder = Path(dirpath)
        rel_dir = folder.relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        if not prefix:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in list(dirnames):
            rel = prefix + name
            if is_leftover(rel):
                dirnames.remove(name)
            elif (folder / name).is_symlink():
                dirnames.remove(name)  # never followed; compared as an entry below
                filenames.append(name)
            elif committed.get(rel, ("", 0))[1] == _MODE_COMMIT:
                dirnames.remove(name)  # a submodule's checkout is not this tree's content
                seen.add(rel)
        for name in filenames:
            rel = prefix + name
            if is_leftover(rel) or rel == ".git":  # .git may be a file (a linked worktree)
                continue
            seen.add(rel)
            diff = _compare(folder / name, rel, committed.get(rel))
            if diff is not None:
                out.append(diff)
    out.extend(Difference(p, "deleted") for p in committed if p not in seen)
    return sorted(out, key=lambda d: d.path)


def _compare(path: Path, rel: str, want: tuple[str, int] | None) -> Difference | None:
    if want is None:
        return Difference(rel, "untracked")
    oid, mode = want
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if mode != _MODE_LINK:
            return Difference(rel, "type")
        data = os.readlink(path).encode("utf-8", "surrogateescape")
    elif not stat.S_ISREG(st.st_mode) or mode == _MODE_LINK:
        return Difference(rel, "type")
    else:
        data = path.read_bytes()
    if str(pygit2.hash(data)) != oid:
        return Difference(rel, "modified")
    if mode != _MODE_LINK and bool(st.st_mode & stat.S_IXUSR) != (mode == _MODE_EXEC):
        return Difference(rel, "mode")
    return None
