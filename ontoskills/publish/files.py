"""The files of a package folder on disk: walk, refuse what a registry must never hold, hash.

Rules (the same ones the install side applies to what it downloads):
- no symlinks and no special files anywhere (UnsafePathError, exit 4);
- every path passes `safety.check_relpath` (POSIX, no hidden Unicode, bounded length);
- size and count limits from `limits.py` (LimitExceededError, exit 4);
- hidden entries (a segment starting with '.': .git, .DS_Store) are not package content
  and are skipped, so an author's checkout can be packed as is.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import LimitExceededError, NotFoundError, UnsafePathError
from ..fsutil import sha256_file
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
                raise UnsafePathError(f"{rel} is not a regular file")
            if rel == MANIFEST:
                continue
            out.append(check_relpath(rel, "package file path"))
    out.sort()
    if len(out) > limits.MAX_PACKAGE_FILES:
        raise LimitExceededError(f"{root}: {len(out)} files, over {limits.MAX_PACKAGE_FILES}")
    return out


def hash_files(root: Path, paths: list[str]) -> list[FileRecord]:
    records = []
    total = 0
    for rel in paths:
        full = root / rel
        st = os.lstat(full)
        if st.st_size > limits.MAX_FILE_BYTES:
            raise LimitExceededError(
                f"{rel} is {st.st_size} bytes, over the per-file limit",
                hint="raise ONTOSKILLS_MAX_FILE_MB, or leave the file out",
            )
        total += st.st_size
        if total > limits.MAX_PACKAGE_BYTES:
            raise LimitExceededError(f"{root}: package over {limits.MAX_PACKAGE_BYTES} bytes")
        sha, size = sha256_file(full)
        records.append(FileRecord(rel, sha, size, bool(st.st_mode & stat.S_IXUSR)))
    return records
