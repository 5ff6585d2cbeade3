"""What `doctor` says about the verified store under a home's package files: which files are
hardlinks of their blob, which edits went through a link other homes share, which blobs no
longer match their name (docs/RELIABILITY.md "One verified store"). Read-only."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..filelink import hash_regular
from ..lockfile import Lockfile
from ..paths import Cache, Home
from .state import Drift

# kinds of StoreIssue
SHARED_EDIT = "edited-through-link"
DAMAGED_BLOB = "damaged-blob"


@dataclass(frozen=True)
class StoreIssue:
    package: str
    path: str
    kind: str  # SHARED_EDIT or DAMAGED_BLOB
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "path": self.path,
            "kind": self.kind,
            "detail": self.detail,
        }

    def text(self) -> str:
        return f"{self.package}/{self.path}: {self.detail}"


@dataclass
class StoreReport:
    linked: int = 0  # files that are their blob (one inode)
    copies: int = 0  # files of their own (another filesystem, executables, older installs)
    relinkable: int = 0  # copies the store could share (same filesystem, blob intact)
    issues: list[StoreIssue] = field(default_factory=list)

    @property
    def damaged_blobs(self) -> bool:
        return any(i.kind == DAMAGED_BLOB for i in self.issues)

    def to_json(self) -> dict[str, Any]:
        return {
            "linked": self.linked,
            "copies": self.copies,
            "relinkable": self.relinkable,
            "issues": [i.to_json() for i in self.issues],
        }


def check_store(
    home: Home, cache: Cache, lock: Lockfile, drifts: dict[str, Drift], *, fast: bool
) -> StoreReport:
    """Compare each installed file with its blob; `drifts` (package_drift's, same mode)
    says which files no longer match the lock. Fast: no blob is hashed."""
    report = StoreReport()
    for pid, pkg in sorted(lock.packages.items()):
        drift = drifts.get(pid)
        modified = set(drift.modified) if drift is not None else set()
        root = home.package_dir(pid)
        for f in pkg.files:
            st = _regular(root.joinpath(*f.path.split("/")))
            if st is None:
                continue  # missing: package_drift says so
            blob = cache.blob(f.sha256)
            bst = _regular(blob)
            same = bst is not None and os.path.samestat(st, bst)
            if f.path in modified:
                if same or st.st_nlink > 1:
                    report.issues.append(_shared_edit(pid, f.path, same))
                continue
            if same:
                report.linked += 1
                continue
            report.copies += 1
            if bst is None or fast:
                continue
            if hash_regular(blob)[0] != f.sha256:
                report.issues.append(
                    StoreIssue(
                        pid,
                        f.path,
                        DAMAGED_BLOB,
                        f"its blob in the store ({blob}) no longer matches; it is never "
                        "linked: the next install drops and refetches it (`ontoskills cache "
                        "clean` removes it now)",
                    )
                )
            elif not f.executable and bst.st_dev == st.st_dev:
                report.relinkable += 1
    return report


def _shared_edit(pid: str, path: str, with_blob: bool) -> StoreIssue:
    whose = "the store's blob" if with_blob else "another home's copy"
    return StoreIssue(
        pid,
        path,
        SHARED_EDIT,
        f"edited through a hard link: {whose} changed with it (every home linked to it "
        "refuses the file); `ontoskills update --force "
        f"{pid}` in each such home refetches it (copy your edit elsewhere first)",
    )


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None
