"""Keep an agent's skills folder in step with the served skills; write only what we own.

A skill folder is OURS when the record lists it and every file in it is a regular file the
record lists with one of its digests (no symlink, no file added, none changed: a missing one
is fine). Anything else is left alone: a folder of that name we did not write makes `link`
refuse (exit 4, naming it) before anything is written, and is a warning when an install,
update, remove, enable or disable keeps the links in step; a folder of ours the user edited
is left in place with a warning and forgotten (it is theirs now).

The agent folder (`.claude/skills`, ...) must be a real folder, as must every folder between
the project root (or the user's home folder) and it: a symlink there would take our writes
elsewhere (exit 4). Inside it, writes and deletes go through fsutil's guarded primitives
(the agent folder is registered as a guarded root), so a symlink planted in a skill folder
is refused, never followed. Nothing is written outside the agent folder but the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UnsafePathError
from ..fsutil import CHUNK, atomic_write_bytes, guard_root, make_dirs, remove_file
from ..paths import Home
from ..progress import Reporter
from ..server.skillfs import MAX_RESOURCES
from . import record as records
from .agents import AGENTS
from .record import Link, LinkedSkill, Record
from .wanted import Catalog, Wanted

OURS, CHANGED, FOREIGN, ABSENT = "ours", "changed", "foreign", "absent"


@dataclass
class LinkReport:
    command: str  # link | unlink
    agent: str
    scope: str
    target: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # changed by someone: not touched
    listing_chars: int | None = None
    listing_budget: int | None = None

    @property
    def linked(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "agent": self.agent,
            "scope": self.scope,
            "target": self.target,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "removed": list(self.removed),
            "left": list(self.left),
            "listing_chars": self.listing_chars,
            "listing_budget": self.listing_budget,
        }


def target_of(agent: str, scope: str, base: Path) -> Path:
    a = AGENTS[agent]
    return base.joinpath(*(a.project if scope == "project" else a.user).split("/"))


def check_target(base: Path, target: Path) -> None:
    """Every folder from `base` (excluded) down to `target` (included) is a real folder or
    does not exist yet; then the target is a guarded root for fsutil's primitives."""
    current = base
    for part in target.relative_to(base).parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePathError(
                f"{current} is a symlink; ontoskills links skills only into a real folder",
                hint=f"replace the symlink {current} with a folder, or link --global",
            )
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafePathError(f"{current} is not a folder", hint=f"move {current} away")
    guard_root(target)


def state_of(folder: Path, linked: LinkedSkill | None) -> tuple[str, dict[str, str]]:
    """(OURS/CHANGED/FOREIGN/ABSENT, the digests of the files in it when OURS)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return ABSENT, {}
    if linked is None:
        return FOREIGN, {}
    if not stat.S_ISDIR(st.st_mode):
        return CHANGED, {}
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for d in dirnames:
            if os.path.islink(os.path.join(dirpath, d)):
                return CHANGED, {}
        for name in filenames:
            p = os.path.join(dirpath, name)
            rel = Path(p).relative_to(folder).as_posix()
            if rel not in linked.files or len(found) >= MAX_RESOURCES:
                return CHANGED, {}
            if not stat.S_ISREG(os.lstat(p).st_mode):
                return CHANGED, {}
            found[rel] = _sha_nofollow(p)
            if found[rel] not in linked.files[rel]:
                return CHANGED, {}
    return OURS, found


def _sha_nofollow(path: str) -> str:
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class _Plan:
    write: dict[str, Wanted] = field(default_factory=dict)  # name -> skill (added/updated)
    drop: list[str] = field(default_factory=list)  # names of ours no longer served
    refused: list[str] = field(default_factory=list)  # folders not ours where we would write


Digests = dict[str, dict[str, str]]  # folder name -> path -> sha256, as on disk


def plan(link: Link, catalog: Catalog, report: LinkReport) -> tuple[_Plan, Digests]:
    """What to write and remove; the digests of our folders as they are now."""
    target = link.target
    p = _Plan()
    current: Digests = {}
    for name, w in catalog.skills.items():
        state, digests = state_of(target / name, link.skills.get(name))
        if state in (FOREIGN, CHANGED):
            p.refused.append(str(target / name))
            continue
        current[name] = digests
        if state == ABSENT:
            report.added.append(name)
            p.write[name] = w
        elif digests == w.digests() and link.skills[name].key == w.key:
            report.unchanged.append(name)
        else:
            report.updated.append(name)
            p.write[name] = w
    for name in sorted(set(link.skills) - set(catalog.skills)):
        state, digests = state_of(target / name, link.skills[name])
        if state == OURS:
            current[name] = digests
            p.drop.append(name)
        elif state == ABSENT:
            report.removed.append(name)
            del link.skills[name]
        else:
            report.left.append(str(target / name))
            del link.skills[name]
    return p, current


def apply(
    home: Home, rec: Record, link: Link, catalog: Catalog, p: _Plan, current: Digests
) -> None:
    """Write the plan: record both digests, write and remove files, record the new ones."""
    target = link.target
    for name, w in p.write.items():  # pending: old and new digests are both ours
        old = link.skills.get(name)
        files = {f.path: [f.sha256] for f in w.files}
        for path, digests in (old.files if old else {}).items():
            files[path] = list(dict.fromkeys([*digests[-1:], *files.get(path, [])]))
        link.skills[name] = LinkedSkill(w.key, files)
    records.save(home, rec)
    for name, w in p.write.items():
        folder = make_dirs(target / name)
        have = current.get(name, {})
        for f in w.files:
            if have.get(f.path) != f.sha256:
                data = catalog.read(w, f)
                atomic_write_bytes(folder / f.path, data, 0o755 if f.executable else 0o644)
        wanted = {f.path for f in w.files}
        _remove(folder, [x for x in have if x not in wanted], whole=False)
        link.skills[name] = LinkedSkill(w.key, {f.path: [f.sha256] for f in w.files})
    for name in p.drop:
        _remove(target / name, list(current[name]), whole=True)
        del link.skills[name]
    records.save(home, rec)


def _remove(folder: Path, paths: list[str], *, whole: bool) -> None:
    """Remove our files, then the folders they leave empty (the skill folder too if `whole`)."""
    for rel in paths:
        remove_file(folder / rel)
    for dirpath, _dirs, _files in os.walk(folder, topdown=False):
        if Path(dirpath) == folder and not whole:
            continue
        with contextlib.suppress(OSError):  # not empty: something of someone else's stays
            os.rmdir(dirpath)


def unlink_all(home: Home, rec: Record, link: Link, report: LinkReport, rep: Reporter) -> None:
    target = link.target
    for name in sorted(link.skills):
        state, digests = state_of(target / name, link.skills[name])
        if state == OURS:
            _remove(target / name, list(digests), whole=True)
            report.removed.append(name)
        elif state != ABSENT:
            report.left.append(str(target / name))
            rep.warn(f"{target / name} changed since it was linked; left in place")
    rec.links.remove(link)
    records.save(home, rec)
