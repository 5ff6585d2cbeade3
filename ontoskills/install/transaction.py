"""Atomic changes to the installed tree and its lockfile, with crash recovery.

A transaction lives in `<home>/.staging/<id>/` (same filesystem as the tree, so every move is
an atomic rename):

    new/<author>/<pkg>/...   package folders built and verified before anything is touched
    old/<i>/...              the previous folders, moved aside during the swap
    journal.json             what the swap does, and the sha256 of the old and new lockfile

Commit = journal (fsync) -> move old folders aside -> move new folders in -> write the lock
(temp + fsync + replace, through a symlink if the lock is one) -> delete the transaction. If
the process dies anywhere, the next run calls `recover()`: when the lock on disk is the new
one every move already happened and the transaction rolls forward (cleanup); otherwise every
move is undone and the previous tree and lock are exactly as they were.

Everything `recover` reads is untrusted (journal.py validates the journal); every folder it
moves or deletes goes through fsutil's guarded primitives, so a symlink planted at
`.staging`, a transaction folder, `ontologies/author/<a>` or any folder between them is
refused (exit 4) rather than followed.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LockFormatError, UnsafePathError
from ..fsutil import (
    atomic_write_bytes,
    atomic_write_through,
    check_path,
    fsync_dir,
    make_dirs,
    remove_file,
    remove_tree,
    sha256_bytes,
    write_target,
)
from ..paths import Home
from .journal import JOURNAL, Journal, Op, lock_sha, read_journal, refuse

__all__ = ["JOURNAL", "Op", "Transaction", "recover"]


@dataclass
class Transaction:
    home: Home
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    ops: list[Op] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return self.home.staging_dir / self.id

    def __post_init__(self) -> None:
        make_dirs(self.dir / "new")

    def stage_dir(self, package_id: str) -> Path:
        """An empty folder to build a package in; becomes its installed folder on commit."""
        return make_dirs(self.dir / "new" / package_id)

    def replace(self, target: Path, staged: Path) -> None:
        self.ops.append(Op(_rel(self.home, target), staged.relative_to(self.dir).as_posix(), None))

    def remove(self, target: Path) -> None:
        self.ops.append(Op(_rel(self.home, target), None, None))

    def commit(self, lock_path: Path, new_lock: bytes | None, *, old_sha: str | None) -> None:
        """Swap folders in, then write the lock; `new_lock=None` deletes the lockfile.
        `old_sha`: the sha256 of the lock on disk (None: none), which the caller read under
        the home and lockfile locks, so it cannot have changed."""
        for op in self.ops:
            # A symlink planted at or above a package folder (author/evil -> /etc) would make
            # os.replace write outside the home: refuse before anything moves.
            check_path(self.home.root / op.target)
        new_sha = sha256_bytes(new_lock) if new_lock is not None else None
        for i, op in enumerate(self.ops):
            op.backup = f"old/{i}"
        journal = Journal("swapping", os.path.abspath(lock_path), old_sha, new_sha, self.ops)
        atomic_write_bytes(self.dir / JOURNAL, journal.to_bytes())
        try:
            self._swap(lock_path, new_lock)
            journal.state = "committed"
            atomic_write_bytes(self.dir / JOURNAL, journal.to_bytes())
        except BaseException:
            # Disk full, read-only tree, Ctrl-C: undo in-process, leave nothing half done.
            if not _committed(journal, lock_path):
                _roll_back(self.home, self.dir, journal)
            self.discard()
            raise
        self.discard()

    def _swap(self, lock_path: Path, new_lock: bytes | None) -> None:
        moved_into: dict[Path, None] = {}  # each folder once: 103 packages are ~10 authors
        for op in self.ops:
            target = self.home.root / op.target
            if target.exists() or target.is_symlink():
                make_dirs(self.dir / "old")
                os.replace(target, self.dir / op.backup)  # type: ignore[operator]
            if op.new is not None:
                make_dirs(target.parent)
                os.replace(self.dir / op.new, target)
                moved_into[target.parent] = None
        for folder in moved_into:  # the renames are durable before the lock names them
            fsync_dir(folder)
        if new_lock is not None:
            atomic_write_through(lock_path, new_lock)
        else:
            with contextlib.suppress(FileNotFoundError):
                lock_path.unlink()

    def discard(self) -> None:
        remove_tree(self.dir)
        _prune_empty_authors(self.home)


def _rel(home: Home, path: Path) -> str:
    return path.relative_to(home.root).as_posix()


def _prune_empty_authors(home: Home) -> None:
    check_path(home.author_dir)  # never list (and rmdir in) a folder a symlink points to
    if not home.author_dir.is_dir():
        return
    for author in home.author_dir.iterdir():
        with contextlib.suppress(OSError):
            author.rmdir()  # only succeeds when empty (and never on a symlink)


def _committed(journal: Journal, lock_path: Path) -> bool:
    """Did the transaction reach its last step? The lock write is last, so a changed lock
    equal to the new one proves every folder move before it happened."""
    if journal.state == "committed":
        return True
    new_sha = journal.new_lock_sha256
    return new_sha != journal.old_lock_sha256 and lock_sha(lock_path) == new_sha


def recover(home: Home, lock_path: Path | None = None) -> list[str]:
    """Finish or undo interrupted transactions; returns one line per action, for logs.

    lock_path: this command's lockfile (held under its lock); only beside it do we delete
    temp files of an interrupted lock write, never beside a path a journal names."""
    actions: list[str] = []
    # Derived files are rewritten after every change under the home lock we hold now.
    if _remove_stale_temps(home.system_dir, ("index.enabled.ttl", "index.installed.ttl")):
        actions.append("removed temporary files of an interrupted write")
    if lock_path is not None and _remove_stale_temps(
        write_target(lock_path).parent, (write_target(lock_path).name,), guarded=False
    ):
        actions.append("removed temporary files of an interrupted lockfile write")
    staging = check_path(home.staging_dir)  # a symlinked .staging is refused, never listed
    if not staging.is_dir():
        return actions
    for txn_dir in sorted(staging.iterdir()):
        check_path(txn_dir)  # a symlink planted in .staging: refused, not followed
        if not txn_dir.is_dir():
            continue
        journal = read_journal(txn_dir / JOURNAL)
        if journal is None:
            actions.append(f"removed unfinished staging {txn_dir.name} (nothing was changed)")
            remove_tree(txn_dir)
            continue
        try:
            committed = _committed(journal, Path(journal.lockfile))
        except (UnsafePathError, LockFormatError) as exc:  # a FIFO, device or huge file now
            raise refuse(txn_dir / JOURNAL, f"its lockfile: {exc.message}", unsafe=True) from None
        if committed:
            actions.append(f"completed interrupted transaction {txn_dir.name}")
        else:
            _roll_back(home, txn_dir, journal)
            actions.append(f"rolled back interrupted transaction {txn_dir.name}")
        remove_tree(txn_dir)
    _prune_empty_authors(home)
    return actions


def _stale_temp_re(name: str) -> re.Pattern[str]:
    # exactly what tempfile.mkstemp(prefix=".<name>.", suffix=".tmp") creates
    return re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]+\.tmp")


def _remove_stale_temps(folder: Path, names: tuple[str, ...], *, guarded: bool = True) -> int:
    """atomic_write_bytes leaves `.<name>.<random>.tmp` beside its target when killed
    mid-write; only files we write under the home lock (and the lockfile's lock) are
    matched, so none is in use."""
    if guarded:
        check_path(folder)
    if not folder.is_dir():
        return 0
    patterns = [_stale_temp_re(name) for name in names]
    removed = 0
    for path in folder.glob(".*.tmp"):
        if any(p.fullmatch(path.name) for p in patterns) and not path.is_symlink():
            if guarded:
                remove_file(path)
            else:
                path.unlink(missing_ok=True)
            removed += 1
    return removed


def _real_dir(txn_dir: Path, rel: str | None) -> Path | None:
    """A staged or backed-up folder of the transaction; never through a symlink."""
    if rel is None:
        return None
    return check_path(txn_dir / rel)


def _roll_back(home: Home, txn_dir: Path, journal: Journal) -> None:
    for op in reversed(journal.ops):
        target = check_path(home.root / op.target, leaf=False)
        backup = _real_dir(txn_dir, op.backup)
        staged = _real_dir(txn_dir, op.new)
        if backup is not None and backup.exists():
            # The op ran at least its first move: put the previous folder back.
            if target.exists() or target.is_symlink():
                remove_tree(target)
            make_dirs(target.parent)
            os.replace(backup, target)
        elif staged is not None and not staged.exists() and target.exists():
            # A fresh install whose folder was already moved in: take it out again.
            remove_tree(target)
