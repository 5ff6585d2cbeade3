"""Atomic changes to the installed tree and its lockfile, with crash recovery.

A transaction lives in `<home>/.staging/<id>/` (same filesystem as the tree, so every move is
an atomic rename):

    new/<author>/<pkg>/...   package folders built and verified before anything is touched
    old/<author>/<pkg>/...   the previous folders, moved aside during the swap
    journal.json             what the swap does, and the sha256 of the old and new lockfile

Commit = journal (fsync) -> move old folders aside -> move new folders in -> write the lock
(temp + fsync + replace) -> delete the transaction. If the process dies anywhere, the next
run calls `recover()`: when the lock on disk is the new one every move already happened and
the transaction rolls forward (cleanup); otherwise every move is undone and the previous tree
and lock are exactly as they were.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UnsafePathError
from ..fsutil import atomic_write_bytes, fsync_dir, remove_tree, sha256_bytes
from ..paths import Home

JOURNAL = "journal.json"


@dataclass
class Op:
    """Replace (or remove, when new is None) one folder of the tree, relative to the home."""

    target: str
    new: str | None
    backup: str | None = None


@dataclass
class Transaction:
    home: Home
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    ops: list[Op] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return self.home.staging_dir / self.id

    def __post_init__(self) -> None:
        (self.dir / "new").mkdir(parents=True, exist_ok=True)

    def stage_dir(self, package_id: str) -> Path:
        """An empty folder to build a package in; becomes its installed folder on commit."""
        path = self.dir / "new" / package_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def replace(self, target: Path, staged: Path) -> None:
        self.ops.append(Op(_rel(self.home, target), staged.relative_to(self.dir).as_posix(), None))

    def remove(self, target: Path) -> None:
        self.ops.append(Op(_rel(self.home, target), None, None))

    def commit(self, lock_path: Path, new_lock: bytes | None) -> None:
        """Swap folders in, then write the lock; `new_lock=None` deletes the lockfile."""
        for op in self.ops:
            _check_real_parents(self.home, op.target)
        old_sha = sha256_bytes(lock_path.read_bytes()) if lock_path.exists() else None
        new_sha = sha256_bytes(new_lock) if new_lock is not None else None
        for i, op in enumerate(self.ops):
            op.backup = f"old/{i}"
        self._write_journal("swapping", lock_path, old_sha, new_sha)
        try:
            self._swap(lock_path, new_lock)
            self._write_journal("committed", lock_path, old_sha, new_sha)
        except BaseException:
            # Disk full, read-only tree, Ctrl-C: undo in-process, leave nothing half done.
            journal = json.loads((self.dir / JOURNAL).read_text(encoding="utf-8"))
            if not _committed(journal, lock_path):
                _roll_back(self.home, self.dir, journal)
            self.discard()
            raise
        self.discard()

    def _swap(self, lock_path: Path, new_lock: bytes | None) -> None:
        for op in self.ops:
            target = self.home.root / op.target
            if target.exists() or target.is_symlink():
                (self.dir / "old").mkdir(exist_ok=True)
                os.replace(target, self.dir / op.backup)  # type: ignore[operator]
            if op.new is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.dir / op.new, target)
                fsync_dir(target.parent)
        if new_lock is not None:
            atomic_write_bytes(lock_path, new_lock)
        else:
            with contextlib.suppress(FileNotFoundError):
                lock_path.unlink()

    def discard(self) -> None:
        remove_tree(self.dir)
        _prune_empty_authors(self.home)

    def _write_journal(
        self, state: str, lock_path: Path, old_sha: str | None, new_sha: str | None
    ) -> None:
        journal = {
            "version": 1,
            "state": state,
            "lockfile": str(lock_path),
            "old_lock_sha256": old_sha,
            "new_lock_sha256": new_sha,
            "ops": [op.__dict__ for op in self.ops],
        }
        atomic_write_bytes(self.dir / JOURNAL, json.dumps(journal, indent=1).encode())


def _check_real_parents(home: Home, target: str) -> None:
    """A symlink planted between the home and a package folder (author/evil -> /etc) would
    make os.replace write outside the home: refuse before anything moves."""
    path = home.root
    for part in target.split("/")[:-1]:
        path = path / part
        if path.is_symlink():
            raise UnsafePathError(
                f"{path} is a symlink; packages are only installed into real folders of the home",
                hint=f"remove the symlink ({path}) and run the command again",
            )


def _rel(home: Home, path: Path) -> str:
    return path.relative_to(home.root).as_posix()


def _prune_empty_authors(home: Home) -> None:
    if not home.author_dir.exists():
        return
    for author in home.author_dir.iterdir():
        with contextlib.suppress(OSError):
            author.rmdir()  # only succeeds when empty


def _lock_sha(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return None


def _committed(journal: dict[str, object], lock_path: Path) -> bool:
    """Did the transaction reach its last step? The lock write is last, so a changed lock
    equal to the new one proves every folder move before it happened."""
    if journal.get("state") == "committed":
        return True
    new_sha = journal.get("new_lock_sha256")
    return new_sha != journal.get("old_lock_sha256") and _lock_sha(lock_path) == new_sha


def recover(home: Home) -> list[str]:
    """Finish or undo interrupted transactions; returns one line per action, for logs."""
    actions: list[str] = []
    # Derived files are rewritten after every change under the home lock we hold now.
    if _remove_stale_temps(home.system_dir, ("index.enabled.ttl", "index.installed.ttl")):
        actions.append("removed temporary files of an interrupted write")
    if not home.staging_dir.exists():
        return actions
    for txn_dir in sorted(home.staging_dir.iterdir()):
        if not txn_dir.is_dir():
            continue
        journal_path = txn_dir / JOURNAL
        try:
            journal = json.loads(journal_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            journal = None
        if not journal or journal.get("state") not in ("swapping", "committed"):
            actions.append(f"removed unfinished staging {txn_dir.name} (nothing was changed)")
            remove_tree(txn_dir)
            continue
        _remove_stale_temps(Path(journal["lockfile"]).parent, (Path(journal["lockfile"]).name,))
        if _committed(journal, Path(journal["lockfile"])):
            actions.append(f"completed interrupted transaction {txn_dir.name}")
        else:
            _roll_back(home, txn_dir, journal)
            actions.append(f"rolled back interrupted transaction {txn_dir.name}")
        remove_tree(txn_dir)
    _prune_empty_authors(home)
    return actions


def _remove_stale_temps(folder: Path, names: tuple[str, ...]) -> int:
    """atomic_write_bytes leaves `.<name>.<random>.tmp` beside its target when killed
    mid-write; only files we write under the home lock are matched, so none is in use."""
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.glob(".*.tmp"):
        if any(path.name.startswith(f".{name}.") for name in names):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed


def _roll_back(home: Home, txn_dir: Path, journal: dict[str, object]) -> None:
    ops = [Op(**op) for op in journal.get("ops", [])]  # type: ignore[union-attr]
    for op in reversed(ops):
        target = home.root / op.target
        backup = txn_dir / op.backup if op.backup else None
        staged = txn_dir / op.new if op.new else None
        if backup is not None and backup.exists():
            # The op ran at least its first move: put the previous folder back.
            if target.exists() or target.is_symlink():
                remove_tree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(backup, target)
        elif staged is not None and not staged.exists() and target.exists():
            # A fresh install whose folder was already moved in: take it out again.
            remove_tree(target)
