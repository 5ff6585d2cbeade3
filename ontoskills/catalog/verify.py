"""Check installed package files against the lock before serving them.

Modes: "full" re-hashes every file; "fast" re-hashes only files whose size, mtime, inode or
ctime differ from the last time we hashed them (a stat cache under state/derived/); "none"
trusts the tree (missing files are still noticed when read). Failing files are reported
and never served.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import jsonio
from ..choices import Choice
from ..errors import OntoskillsError, UsageError
from ..fsutil import atomic_write_text, sha256_file
from ..lockfile import Lockfile
from ..paths import Home

_STAT_FILE = "verified-stats.json"


class VerifyMode(Choice):
    """`search|show|serve --verify`: how installed files are checked before serving."""

    FULL = "full"
    FAST = "fast"
    NONE = "none"


def check_verify_mode(mode: str) -> VerifyMode:
    """For library callers (the CLI's typer choice has already refused a wrong word)."""
    checked = VerifyMode.get(mode)
    if checked is None:
        raise UsageError(f"unknown verify mode {mode!r}: expected one of {VerifyMode.listed()}")
    return checked


@dataclass
class Verification:
    bad: dict[str, set[str]] = field(default_factory=dict)  # package id -> failing paths
    problems: list[str] = field(default_factory=list)

    def ok(self, package_id: str, path: str) -> bool:
        return path not in self.bad.get(package_id, ())

    def fail(self, package_id: str, path: str, why: str) -> None:
        self.bad.setdefault(package_id, set()).add(path)
        self.problems.append(f"{package_id}/{path}: {why}")


def changed_warning(problem: str) -> str:
    """A verification `problem` worded for a user who may have edited the file on purpose:
    what is served instead, and the fix. An edited SKILL.md is the likely one (it is the
    file people open), and its skill is still served, from SKILL.md generated from the
    Turtle: without this line the edit would vanish from the agent's view without a word."""
    if "/SKILL.md: " in problem:
        instead = "its skill is served with a SKILL.md generated from its Turtle, not the edit"
    else:
        instead = "not served"
    return (
        f"{problem}; {instead}: `ontoskills doctor` lists the changed files, "
        "`ontoskills ci` restores the locked bytes"
    )


def _load_stats(path: Path) -> dict[str, list[object]]:
    try:
        data = jsonio.loads(path.read_bytes(), source=str(path), max_bytes=64 * 1024 * 1024)
    except (OSError, OntoskillsError):
        return {}
    return data if isinstance(data, dict) else {}


def verify_tree(home: Home, lock: Lockfile, mode: str) -> Verification:
    mode = check_verify_mode(mode)
    result = Verification()
    stats_path = home.derived_dir / _STAT_FILE
    cached = _load_stats(stats_path) if mode == VerifyMode.FAST else {}
    fresh: dict[str, list[object]] = {}
    for pid in sorted(lock.packages):
        pkg = lock.packages[pid]
        root = home.package_dir(pid)
        for f in pkg.files:
            full = root.joinpath(*f.path.split("/"))
            try:
                st = os.stat(full, follow_symlinks=False)
            except OSError:
                result.fail(pid, f.path, "missing")
                continue
            if not os.path.isfile(full) or os.path.islink(full):
                result.fail(pid, f.path, "not a regular file")
                continue
            if mode == VerifyMode.NONE:
                continue
            if st.st_size != f.size:
                result.fail(pid, f.path, "modified since install (size differs from the lock)")
                continue
            key = f"{pid}/{f.path}"
            # The inode and its change time too: a file may be a hardlink shared with other
            # homes (paths.Cache.link_blob), and a write through any of them, even one that
            # restores the mtime (`cp -p`, `rsync --inplace -t`), changes the ctime, which no
            # user can set. A new link elsewhere changes it as well: one re-hash, no harm.
            entry = [f.sha256, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
            if mode == VerifyMode.FAST and cached.get(key) == entry:
                fresh[key] = entry
                continue
            if sha256_file(full)[0] != f.sha256:
                result.fail(pid, f.path, "modified since install (sha256 differs from the lock)")
                continue
            fresh[key] = entry
    if mode != VerifyMode.NONE and fresh != cached:
        try:
            import json

            atomic_write_text(stats_path, json.dumps(fresh, separators=(",", ":")))
        except OSError:
            pass  # a read-only home still serves; the next start simply hashes again
    return result
