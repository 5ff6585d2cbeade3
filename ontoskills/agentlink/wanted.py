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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.skilldir import SKILL_MD
from ..errors import OntoskillsError
from ..manifest import tier_rank
from ..server.skillfs import MAX_RESOURCES, MAX_TOTAL_BYTES, Served, SkillFS, skill_folder

if TYPE_CHECKING:
    from ..search.service import SkillService


@dataclass(frozen=True)
class WantedFile:
    path: str  # relative to the skill's folder
    sha256: str
    executable: bool


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
        authors = own is not None and own.disk is not None
        modules = {_rel(m, folder) for m in rec.modules}
        files = []
        for f in served.files:
            if authors and f.path in modules:
                continue  # compiled from the authors' SKILL.md: not theirs
            full = f"{folder}/{f.path}" if folder else f.path
            exe = executable.get(full, False) if locked is not None else _local_exe(f.disk)
            files.append(WantedFile(f.path, f.sha256, exe))
        description = str(served.frontmatter.get("description", ""))
        return Wanted(served.name, key, description, served, tuple(files))

    def read(self, w: Wanted, path: str) -> bytes:
        """One file's bytes, checked against its listed digest (skillfs)."""
        f = w.served.file(path)
        assert f is not None
        return self.fs.read(w.served, f)


def _rel(path: str, folder: str) -> str:
    return path[len(folder) + 1 :] if folder and path.startswith(folder + "/") else path


def _local_exe(disk: Path | None) -> bool:
    return disk is not None and os.access(disk, os.X_OK)
