"""What `link` wrote: `state/links.json` in the home, one entry per (agent, folder).

Per linked skill folder: the skill it holds and, per file, the sha256 digests that file may
have (one when at rest; two while a rewrite is under way: the record listing both is written
before the first file changes, so a run killed half-way leaves a folder that still proves to
be ours). Written atomically (fsutil); read back as untrusted (anyone who can write the home
can edit it), so a record that names a folder outside an agent's documented place, a name
that is not a valid skill name or a path with `..` is refused as a whole: nothing is then
removed on its word.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsonio
from ..errors import UnsafePathError
from ..fsutil import atomic_write_bytes
from ..paths import Home
from ..safety import check_relpath
from .agents import AGENTS

RECORD = "links.json"
VERSION = 1
MAX_RECORD_BYTES = 64 * 1024 * 1024
_SHA = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SCOPES = ("project", "global")


class RecordError(ValueError):
    """The record on disk is not one this tool wrote."""


@dataclass
class LinkedSkill:
    key: str  # author/pkg/skill (or local/<folder>/<skill>)
    files: dict[str, list[str]]  # path in the folder -> the digests it may have

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "files": {p: list(s) for p, s in sorted(self.files.items())}}


@dataclass
class Link:
    agent: str
    scope: str
    base: str  # the project root or the user's home folder (absolute)
    skills: dict[str, LinkedSkill] = field(default_factory=dict)  # folder name -> skill

    @property
    def target(self) -> Path:
        a = AGENTS[self.agent]
        rel = a.project if self.scope == "project" else a.user
        return Path(self.base).joinpath(*rel.split("/"))

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "scope": self.scope,
            "base": self.base,
            "skills": {n: s.to_json() for n, s in sorted(self.skills.items())},
        }


@dataclass
class Record:
    links: list[Link] = field(default_factory=list)

    def find(self, agent: str, base: str, scope: str) -> Link | None:
        return next(
            (x for x in self.links if (x.agent, x.base, x.scope) == (agent, base, scope)), None
        )

    def to_bytes(self) -> bytes:
        doc = {"version": VERSION, "links": [x.to_json() for x in self.links]}
        return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def path_of(home: Home) -> Path:
    return home.state_dir / RECORD


def exists(home: Home) -> bool:
    return os.path.lexists(path_of(home))


def load(home: Home) -> Record:
    """The record (empty when there is none); RecordError when it is not ours."""
    p = path_of(home)
    try:
        if os.path.islink(p):
            raise RecordError(f"{p} is a symlink")
        with open(p, "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        return Record()
    except OSError as exc:
        raise RecordError(f"{p}: {exc.strerror}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"{p} is larger than {MAX_RECORD_BYTES} bytes")
    try:
        return _parse(jsonio.loads_derived(data))
    except (ValueError, TypeError, KeyError, AttributeError, UnsafePathError) as exc:
        raise RecordError(f"{p}: {exc}") from None


def save(home: Home, record: Record) -> None:
    p = path_of(home)
    if record.links:
        atomic_write_bytes(p, record.to_bytes())
    else:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _parse(doc: Any) -> Record:
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise RecordError("not a link record of this version")
    links = doc["links"]
    if not isinstance(links, list):
        raise RecordError("links is not a list")
    out = Record()
    for raw in links:
        agent, scope, base = raw["agent"], raw["scope"], raw["base"]
        if agent not in AGENTS or scope not in SCOPES:
            raise RecordError(f"unknown agent or scope {agent!r} {scope!r}")
        if not isinstance(base, str) or not os.path.isabs(base) or ".." in Path(base).parts:
            raise RecordError(f"base {base!r} is not an absolute path")
        link = Link(agent, scope, base)
        skills = raw["skills"]
        if not isinstance(skills, dict):
            raise RecordError("skills is not a table")
        for name, s in skills.items():
            link.skills[_name(name)] = _skill(s)
        if out.find(agent, base, scope) is not None:
            raise RecordError(f"{agent} {base} listed twice")
        out.links.append(link)
    return out


def _name(name: Any) -> str:
    if not isinstance(name, str) or len(name) > 64 or not _NAME.fullmatch(name):
        raise RecordError(f"{name!r} is not a skill folder name")
    return name


def _skill(raw: Any) -> LinkedSkill:
    key, files = raw["key"], raw["files"]
    if not isinstance(key, str) or not isinstance(files, dict):
        raise RecordError("a linked skill has no key or files")
    out: dict[str, list[str]] = {}
    for path, digests in files.items():
        check_relpath(path, "linked file")
        if not isinstance(digests, list) or not digests or len(digests) > 2:
            raise RecordError(f"{path}: expected one or two digests")
        if not all(isinstance(d, str) and _SHA.fullmatch(d) for d in digests):
            raise RecordError(f"{path}: not a sha256 digest")
        out[path] = list(digests)
    return LinkedSkill(key, out)
