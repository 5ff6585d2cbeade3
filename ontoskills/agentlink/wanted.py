"""What an agent's skills folder should hold: every served skill, as the Skills extension
serves it (server/skillfs.py), one folder per skill named by its Agent Skills name.

* A skill whose package carries its authors' own SKILL.md (a SKILL.md source, or `pack
  --from-skill-md`) is the authors' files, byte for byte: SKILL.md, scripts, references,
  assets. The Turtle modules compiled from it stay in the home: an agent reads SKILL.md.
* A compiled skill is the generated SKILL.md and the part files it links
  (catalog/skilldir.py), plus the skill's installed files, which SKILL.md lists.

Two served skills with the same name (from two packages) cannot both have the folder: agents
key skills by folder name and the Agent Skills spec wants `name` to equal it, so renaming one
would break its authors' SKILL.md. The one of the higher trust tier keeps the name (then the
first package id), the other is not linked, with a warning naming both; the MCP tool still
finds both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.skilldir import SKILL_MD, valid_name
from ..catalog.verify import changed_warning
from ..errors import OntoskillsError
from ..manifest import tier_rank
from ..server import authormd
from ..server.skillfs import MAX_RESOURCES, MAX_TOTAL_BYTES, Served, SkillFS, skill_folder

if TYPE_CHECKING:
    from ..search.service import SkillService


@dataclass(frozen=True)
class WantedFile:
    path: str  # relative to the skill's folder
    sha256: str
    executable: bool
    source: str  # the served path it is read from (the authors' SKILL.md may be moved there)


@dataclass(frozen=True)
class Wanted:
    name: str  # the folder name (the served Agent Skills name)
    key: str
    description: str
    served: Served
    files: tuple[WantedFile, ...]

    def digests(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}


class Catalog:
    """The served skills of one service, as folders to write (bytes read on demand)."""

    def __init__(self, service: SkillService) -> None:
        self.fs = SkillFS(service, None)
        self.warnings: list[str] = []
        self.skills: dict[str, Wanted] = {}
        # files verification refused (an installed SKILL.md edited in the home): said once
        # per run, naming the file and the fix, not dropped without a word
        self.warnings += [changed_warning(p) for p in dict.fromkeys(service.problems)]
        self._collect()

    def _collect(self) -> None:
        by_name: dict[str, list[Wanted]] = {}
        for key in self.fs.served_keys():
            try:
                w = self._wanted(key)
            except OntoskillsError as exc:  # a file changed in the home since it was locked
                self.warnings.append(f"{key} not linked: {exc.message}")
                continue
            except OSError as exc:
                self.warnings.append(f"{key} not linked: {exc}")
                continue
            if w is not None:
                by_name.setdefault(w.name, []).append(w)
        names = self.fs.names()
        for name, ws in sorted(by_name.items()):
            ws.sort(key=lambda w: (-tier_rank(names.records[w.key].trust_tier), w.key))
            self.skills[name] = ws[0]
            for other in ws[1:]:
                self.warnings.append(
                    f"{other.key} not linked: its folder name {name!r} is {ws[0].key}'s "
                    "(higher trust tier, or first by id); the MCP tool still serves both"
                )

    def _wanted(self, key: str) -> Wanted | None:
        served = self.fs.served(key)
        if not served.within_limits():
            self.warnings.append(
                f"{key} not linked: over {MAX_RESOURCES} files or "
                f"{MAX_TOTAL_BYTES // (1024 * 1024)} MB"
            )
            return None
        names = self.fs.names()
        rec = names.records[key]
        folder = skill_folder(rec)
        locked = names.locked.get(rec.package)
        executable = {}
        if locked is not None:
            pkg = names.view.lock.packages[rec.package]
            executable = {f.path: f.executable for f in pkg.files}
        own = served.file(SKILL_MD)
        name, front = served.name, served.frontmatter
        # An authors' SKILL.md whose `name` is not the skill id (vercel's `composition-patterns`
        # folder says `vercel-composition-patterns`): the extension serves it beside a
        # generated SKILL.md; an agent's folder can take the authors' name and bytes instead.
        moved = next(
            (
                f
                for f in served.files
                if f.disk is not None and f.disk.name == SKILL_MD and f.path != SKILL_MD
            ),
            None,
        )
        if moved is not None:
            name, front = _authors_name(self.fs.read(served, moved)) or (name, front)
        authors = (own is not None and own.disk is not None) or name != served.name
        modules = {_rel(m, folder) for m in rec.modules}
        files = []
        for f in served.files:
            if authors and (f.path in modules or f.disk is None):
                continue  # compiled or generated from the authors' SKILL.md: not theirs
            installed = SKILL_MD if f is moved else f.path  # its path in the skill's folder
            full = f"{folder}/{installed}" if folder else installed
            exe = executable.get(full, False) if locked is not None else _local_exe(f.disk)
            path = SKILL_MD if authors and f is moved else f.path
            files.append(WantedFile(path, f.sha256, exe, f.path))
        description = str(front.get("description", ""))
        return Wanted(name, key, description, served, tuple(files))

    def read(self, w: Wanted, f: WantedFile) -> bytes:
        """One file's bytes, checked against its listed digest (skillfs)."""
        served = w.served.file(f.source)
        assert served is not None
        return self.fs.read(w.served, served)


_NAME_LINE = re.compile(r"^name:[ \t]*([\"']?)([a-z0-9-]{1,64})\1[ \t]*\r?$", re.M)


def _authors_name(data: bytes) -> tuple[str, dict[str, Any]] | None:
    """(name, frontmatter) of an authors' SKILL.md whose `name` is a valid Agent Skills name
    (read by the bounded reader, authormd), else None."""
    head = data[: authormd.MAX_FRONTMATTER + 8].decode("utf-8", "replace")
    m = _NAME_LINE.search(head.split("\n---", 1)[0])
    if m is None or not valid_name(m.group(2)):
        return None
    front = authormd.frontmatter_of(data, m.group(2))
    return None if front is None else (m.group(2), front)


def _rel(path: str, folder: str) -> str:
    return path[len(folder) + 1 :] if folder and path.startswith(folder + "/") else path


def _local_exe(disk: Path | None) -> bool:
    return disk is not None and os.access(disk, os.X_OK)
