"""Read-modify-commit on a registry's git checkout, safe against a commit landing meanwhile.

`publish`, `registry sign`, `registry keys rotate` and `registry init --signed` read HEAD
(`read_base`), build their tree on that commit, and `swap` moves the branch only if it still
points there: under git's own locks, taken in `git commit`'s order (`index.lock`, then the
branch's ref lock), the ref is read again and compared (compare-and-swap). If another commit
landed, nothing is written: RegistryChangedError (exit 1), and the same command run again
builds on the new HEAD. No commit of anyone else is ever reverted.

The index is updated in the same locked step, and only under the paths the commit replaced;
the work tree after it (by the caller, which calls `done` when finished). From just before
the swap until then, a journal in `.git/` names the new commit and those paths: a command
killed in between is completed by the next one under the registry lock (`finish_interrupted`
writes the commit's exact bytes under those paths, never through git's filters).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2

from .. import jsonio, limits
from ..errors import BusyError, IntegrityError, RegistryChangedError, UnsafePathError
from ..fsutil import atomic_write_bytes, remove_file, remove_tree
from ..safety import check_relpath

JOURNAL = "ontoskills-checkout.json"
CHANGED = "the registry changed while publishing; run again"
LOCK_WAIT = 2.0  # seconds: a running git holds index.lock for milliseconds, a dead one forever
_MODE_FILE = int(pygit2.enums.FileMode.BLOB)
_MODE_EXEC = int(pygit2.enums.FileMode.BLOB_EXECUTABLE)
Entries = dict[str, tuple[pygit2.Oid, int]]  # index entries: path -> (blob id, file mode)


@dataclass(frozen=True)
class Base:
    """The commit a command read and builds on, and the ref that HEAD moves: the branch HEAD
    names (`refs/heads/main`), or HEAD itself when detached (no branch is ever moved then)."""

    ref: str
    commit: pygit2.Oid | None  # None: an unborn branch (a repository without commits)

    def tree(self, repo: pygit2.Repository) -> pygit2.Tree | None:
        return None if self.commit is None else repo[self.commit].peel(pygit2.Tree)


def _target(repo: pygit2.Repository, name: str) -> pygit2.Oid | None:
    ref = repo.references.get(name)
    if ref is None:
        return None
    target = ref.target
    if not isinstance(target, pygit2.Oid):
        raise IntegrityError(
            f"{name} in the registry's repository is a symbolic reference to {target}",
            hint="check out a branch (`git switch main`), then run the command again",
        )
    return target


def _head_names(repo: pygit2.Repository) -> str:
    head = repo.references.get("HEAD")
    if head is None:
        raise IntegrityError("the registry's repository has no HEAD", hint="run `git status`")
    target = head.target
    return target if isinstance(target, str) else "HEAD"


def read_base(repo: pygit2.Repository) -> Base:
    ref = _head_names(repo)
    return Base(ref, _target(repo, ref))


@dataclass(frozen=True)
class Checkout:
    """A registry's git checkout opened for one read-modify-commit."""

    repo: pygit2.Repository
    base: Base
    finished: list[str]  # paths of a killed command's commit completed first (journal)


def open_checkout(root: Path, *, complete: bool = True) -> Checkout:
    """The repository at `root` and the commit a command builds on, read after completing
    what a killed command left (`finish_interrupted`; complete=False in a dry run). The
    caller holds the registry lock (publish.registry_lock)."""
    repo = pygit2.Repository(str(root))
    finished = finish_interrupted(repo, root) if complete else []
    return Checkout(repo, read_base(repo), finished)


def ensure_unchanged(repo: pygit2.Repository, base: Base) -> None:
    """RegistryChangedError when HEAD no longer is `base` (a check without a swap)."""
    if _head_names(repo) != base.ref or _target(repo, base.ref) != base.commit:
        raise RegistryChangedError(CHANGED, hint=_moved_hint(repo, base))


def _moved_hint(repo: pygit2.Repository, base: Base) -> str:
    def short(oid: pygit2.Oid | None) -> str:
        return "no commit" if oid is None else str(oid)[:12]

    ref = _head_names(repo)
    what = (
        f"{base.ref} moved from {short(base.commit)} to {short(_target(repo, ref))}"
        if ref == base.ref
        else f"HEAD now names {ref} (it named {base.ref})"
    )
    return f"{what} after this command read it; nothing was written"


def swap(
    repo: pygit2.Repository,
    base: Base,
    new: pygit2.Oid,
    message: str,
    prefixes: list[str],
    entries: Entries,
) -> None:
    """Move `base.ref` from `base.commit` to `new` only if it still points there, and make
    the index hold `entries` under `prefixes` (the rest of it untouched), under index.lock
    and the ref's lock; the journal stays until `done`."""
    _write_journal(repo, new, prefixes)
    moved = False

    def move() -> None:
        nonlocal moved
        _compare_and_swap(repo, base, new, message)
        moved = True

    try:
        _update_index(repo, prefixes, entries, move)
    finally:
        if not moved and _target(repo, base.ref) != new:
            _journal(repo).unlink(missing_ok=True)


def done(repo: pygit2.Repository) -> None:
    """The work tree holds the commit under the journal's paths: nothing left to complete."""
    _journal(repo).unlink(missing_ok=True)


def _compare_and_swap(repo: pygit2.Repository, base: Base, new: pygit2.Oid, message: str) -> None:
    first_line = (message.splitlines() or [""])[0]
    try:
        with repo.transaction() as txn:
            txn.lock_ref(base.ref)  # held until the transaction ends: nobody moves it now
            if _head_names(repo) != base.ref or _target(repo, base.ref) != base.commit:
                raise RegistryChangedError(CHANGED, hint=_moved_hint(repo, base))
            txn.set_target(base.ref, new, message=f"commit: {first_line}")
    except pygit2.GitError as exc:  # its lock file exists: another git process is writing it
        raise BusyError(
            f"git could not lock {base.ref} of the registry: {exc}",
            hint="another git process is updating it; nothing was written: run the same "
            "command again once it is done",
        ) from None


@contextlib.contextmanager
def _index_lock(repo: pygit2.Repository) -> Iterator[None]:
    """git's own lock of the index (`.git/index.lock`, created exclusively): a `git commit`
    holds it from reading the index to moving its branch, so it and we never interleave.
    Held for milliseconds: the new index is built and synced before it is taken."""
    lock = Path(repo.path) / "index.lock"
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            break
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise BusyError(
                    f"{lock} exists: another git process is using the registry's index",
                    hint="nothing was written; run the command again once it is done (if no "
                    "git process is running, a crashed one left it: remove the file)",
                ) from None
            time.sleep(0.02)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # ours: the new index is renamed over the index itself


def _update_index(
    repo: pygit2.Repository,
    prefixes: list[str],
    entries: Entries,
    move: Callable[[], None] | None = None,
) -> None:
    """The repository's index with everything under `prefixes` replaced by `entries` (the
    rest as it is); `move` (the ref's compare-and-swap) runs under the same lock, first."""
    source = _index_bytes(repo)
    scratch = _build_index(repo, prefixes, entries, source)
    try:
        with _index_lock(repo):
            if _index_bytes(repo) != source:  # a `git add` meanwhile: build on its index
                scratch = _build_index(repo, prefixes, entries, _index_bytes(repo))
            if move is not None:
                move()
            os.replace(scratch, Path(repo.path) / "index")
    finally:
        scratch.unlink(missing_ok=True)


def _index_bytes(repo: pygit2.Repository) -> bytes:
    try:
        return (Path(repo.path) / "index").read_bytes()
    except FileNotFoundError:
        return b""


def _build_index(
    repo: pygit2.Repository, prefixes: list[str], entries: Entries, source: bytes
) -> Path:
    """A new index file in `.git/` (synced, not yet in place): `source` with everything
    under `prefixes` replaced by `entries`."""
    scratch = Path(repo.path) / f"ontoskills-index.{os.getpid()}.tmp"
    scratch.unlink(missing_ok=True)
    if source:
        scratch.write_bytes(source)
    index = pygit2.Index(str(scratch))
    for path in [e.path for e in index if _under(e.path, prefixes)]:
        index.remove(path)
    for path, (oid, mode) in sorted(entries.items()):
        index.add(pygit2.IndexEntry(path, oid, pygit2.enums.FileMode(mode)))
    index.write()  # not synced, as git's own index is not (core.fsync's default)
    return scratch


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


# --- the journal: a swap whose work tree is not written yet -------------------------------


def _journal(repo: pygit2.Repository) -> Path:
    return Path(repo.path) / JOURNAL


def _write_journal(repo: pygit2.Repository, commit: pygit2.Oid, prefixes: list[str]) -> None:
    # Renamed into place, not synced: it guards against a killed process, like the ref and
    # the index it goes with (libgit2 and git sync neither by default).
    body = json.dumps({"commit": str(commit), "paths": prefixes}, indent=1) + "\n"
    tmp = Path(repo.path) / f"{JOURNAL}.{os.getpid()}.tmp"
    tmp.write_bytes(body.encode())
    os.replace(tmp, _journal(repo))


def _read_journal(repo: pygit2.Repository) -> tuple[pygit2.Oid, list[str]] | None:
    path = _journal(repo)
    try:
        data = limits.read_regular_file(path, 1 << 20, what="journal", error=IntegrityError)
    except FileNotFoundError:
        return None
    doc = jsonio.loads(data, source=str(path))
    commit = doc.get("commit") if isinstance(doc, dict) else None
    paths = doc.get("paths") if isinstance(doc, dict) else None
    if not (
        isinstance(commit, str)
        and len(commit) == 40
        and all(c in "0123456789abcdef" for c in commit)
        and isinstance(paths, list)
        and all(isinstance(p, str) for p in paths)
    ):
        raise IntegrityError(
            f"{path} is not a journal ontoskills wrote",
            hint="if no ontoskills command is running on this registry, remove that file",
        )
    return pygit2.Oid(hex=commit), [check_relpath(p, "journal path") for p in paths]


def finish_interrupted(repo: pygit2.Repository, root: Path) -> list[str]:
    """Complete what a killed command left (the caller holds the registry lock, so its
    writer is dead): when HEAD is the journal's commit, the work tree and the index get that
    commit's bytes under the journal's paths. A journal whose commit never became HEAD
    (killed before its swap) is dropped. Returns the paths completed."""
    for pattern in ("ontoskills-index.*.tmp", f"{JOURNAL}.*.tmp"):  # a dead writer's
        for scratch in Path(repo.path).glob(pattern):
            scratch.unlink(missing_ok=True)
    found = _read_journal(repo)
    if found is None:
        return []
    commit, prefixes = found
    if _target(repo, _head_names(repo)) != commit:
        done(repo)
        return []
    tree = repo[commit].peel(pygit2.Tree)
    entries: Entries = {}
    for prefix in prefixes:
        entries.update(_checkout_exact(repo, root, tree, prefix))
    _update_index(repo, prefixes, entries)
    done(repo)
    return prefixes


def _checkout_exact(repo: pygit2.Repository, root: Path, tree: pygit2.Tree, prefix: str) -> Entries:
    """Make the work tree under `prefix` (a folder or one file) hold exactly what `tree` has
    there: blob bytes as stored (no eol, ident or filter), exec bits, nothing more."""
    want: Entries = {}
    stack: list[tuple[str, pygit2.Object]] = []
    with contextlib.suppress(KeyError):
        stack.append((prefix, tree[prefix]))
    while stack:
        rel, node = stack.pop()
        if isinstance(node, pygit2.Tree):
            stack.extend((f"{rel}/{c.name}", c) for c in node)
        elif isinstance(node, pygit2.Blob) and int(node.filemode) in (_MODE_FILE, _MODE_EXEC):
            want[rel] = (node.id, int(node.filemode))
        else:
            raise IntegrityError(f"{rel} in commit {tree.id} is not a regular file")
    _refuse_links(root, prefix)
    top = root / prefix
    if top.is_dir() and not top.is_symlink():
        if prefix in want:
            remove_tree(top)  # a folder where the commit has a file
        else:
            _remove_extra(root, top, want)
    elif (top.exists() or top.is_symlink()) and prefix not in want:
        remove_file(top)  # a file or link where the commit has a folder, or nothing
    for rel, (oid, mode) in sorted(want.items()):
        _refuse_links(root, rel)
        data = repo[oid].peel(pygit2.Blob).data
        path = root / rel
        if _holds(path, data, mode == _MODE_EXEC):
            continue
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        atomic_write_bytes(path, data, 0o755 if mode == _MODE_EXEC else 0o644)
    return want


def _holds(path: Path, data: bytes, executable: bool) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    return path.read_bytes() == data and bool(path.stat().st_mode & 0o100) == executable


def _remove_extra(root: Path, top: Path, want: Entries) -> None:
    """Every file (or link) under `top` the commit does not have; then empty folders."""
    for dirpath, dirnames, names in os.walk(top, topdown=False):
        folder = Path(dirpath)
        for name in names + [d for d in dirnames if (folder / d).is_symlink()]:
            if (folder / name).relative_to(root).as_posix() not in want:
                remove_file(folder / name)
        if not os.listdir(folder) and (folder != top or not want):
            os.rmdir(folder)


def _refuse_links(root: Path, rel: str) -> None:
    """No folder between the registry and `rel` is a symlink: never write through one."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        if (root.joinpath(*parts[:i])).is_symlink():
            raise UnsafePathError(
                f"{root}: {'/'.join(parts[:i])} is a symlink; nothing is written through links",
                hint="a registry holds regular folders and files: replace the link",
            )
