"""The files of a package folder on disk: walk, refuse what a registry must never hold, hash.

Rules (the same ones the install side applies to what it downloads):
- no symlinks and no special files anywhere (UnsafePathError, exit 4);
- every path passes `safety.check_relpath` (POSIX, no hidden Unicode, bounded length);
- size and count limits from `limits.py` (LimitExceededError, exit 4);
- hidden entries (a segment starting with '.': .git, .DS_Store) are not package content
  and are skipped, so an author's checkout can be packed as is;
- decided from metadata before anything is written (`stat_files`: type and size from lstat,
  for every file), and a copy (`copy_files`) reads only what was decided (the descriptor's
  fstat must agree) and keeps only the executable bit: 0o755 or 0o644, never setuid,
  setgid, sticky or group/world-writable.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import IntegrityError, LimitExceededError, NotFoundError, UnsafePathError
from ..fsutil import CHUNK, sha256_file
from ..safety import check_relpath

MANIFEST = "package.json"


@dataclass(frozen=True)
class FileRecord:
    path: str
    sha256: str
    size: int
    executable: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "size": self.size,
            "executable": self.executable,
        }


def walk_package(root: Path, *, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Sorted relative paths of the package's regular files (package.json excluded).

    `exclude` holds file names left out wherever they are (e.g. SKILL.md sources).
    """
    if not root.is_dir():
        raise NotFoundError(f"{root} is not a folder", hint="give the package folder")
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in list(dirnames):
            full = base / name
            if name.startswith("."):
                dirnames.remove(name)
            elif full.is_symlink():
                raise UnsafePathError(
                    f"{full.relative_to(root).as_posix()} is a symlink",
                    hint="registries hold regular files only; copy the target in",
                )
        for name in filenames:
            if name.startswith(".") or name in exclude:
                continue
            full = base / name
            rel = full.relative_to(root).as_posix()
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                raise UnsafePathError(
                    f"{rel} is a symlink", hint="registries hold regular files only"
                )
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePathError(
                    f"{rel} is not a regular file",
                    hint="a package holds regular files only: remove it or move it out",
                )
            if rel == MANIFEST:
                continue
            out.append(check_relpath(rel, "package file path"))
    out.sort()
    if len(out) > limits.MAX_PACKAGE_FILES:
        raise LimitExceededError(f"{root}: {len(out)} files, over {limits.MAX_PACKAGE_FILES}")
    return out


@dataclass(frozen=True)
class SourceFile:
    """A package file as lstat saw it, before anything reads or copies it."""

    path: str
    size: int
    executable: bool


def stat_files(
    root: Path, paths: list[str], *, read_whole: dict[str, int] | None = None
) -> list[SourceFile]:
    """Type and size of every file from lstat, before one byte is read or written: regular
    files only (exit 4), the per-file and per-package limits (a sparse 1 GiB file is 1 GiB).
    `read_whole`: file names read whole into memory (SKILL.md) and their own, lower limit."""
    out = []
    total = 0
    for rel in paths:
        st = os.lstat(root / rel)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(
                f"{rel} is not a regular file", hint="registries hold regular files only"
            )
        whole = (read_whole or {}).get(rel.rsplit("/", 1)[-1])
        if whole is not None and st.st_size > whole:
            raise LimitExceededError(
                f"{rel} is {st.st_size} bytes, over the {whole}-byte limit of a file read whole",
                hint=f"keep it under {whole} bytes and move long material into files it links",
            )
        if st.st_size > limits.MAX_FILE_BYTES:
            raise LimitExceededError(
                f"{rel} is {st.st_size} bytes, over the per-file limit",
                hint="raise ONTOSKILLS_MAX_FILE_MB, or leave the file out",
            )
        total += st.st_size
        if total > limits.MAX_PACKAGE_BYTES:
            raise LimitExceededError(
                f"{root}: package over {limits.MAX_PACKAGE_BYTES} bytes",
                hint="raise ONTOSKILLS_MAX_PACKAGE_MB, or leave files out",
            )
        out.append(SourceFile(rel, st.st_size, bool(st.st_mode & stat.S_IXUSR)))
    return out


def copy_files(root: Path, dest: Path, files: list[SourceFile]) -> None:
    """Copy what `stat_files` decided on, and only that: a file that is no longer the
    regular file of that size (swapped for a FIFO or a link, grown) is refused, exit 4."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    for f in files:
        target = dest / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        changed = IntegrityError(f"{f.path} changed while packing", hint="run the command again")
        try:
            fd = os.open(root / f.path, flags | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            raise changed from None
        with os.fdopen(fd, "rb") as src:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size != f.size:
                raise changed
            out_fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(out_fd, "wb") as out:
                left = f.size
                while left and (chunk := src.read(min(CHUNK, left))):
                    out.write(chunk)
                    left -= len(chunk)
                if left or src.read(1):
                    raise changed
                os.fchmod(out.fileno(), 0o755 if f.executable else 0o644)


def hash_files(root: Path, paths: list[str]) -> list[FileRecord]:
    records = []
    for f in stat_files(root, paths):
        sha, size = sha256_file(root / f.path)
        records.append(FileRecord(f.path, sha, size, f.executable))
    return records
