"""`pack`: build or refresh `package.json` for a folder of compiled skills.

The manifest is derived from the Turtle (identifier, name, description, intents, category,
aliases, dependencies of every main skill) plus a `files` array with the hash, size and
executable bit of every file of the package. Output is deterministic: sorted lists, fixed
key order, no timestamps, LF, so packing twice gives the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsonio, limits
from ..errors import FormatError, UsageError
from ..fsutil import atomic_write_bytes
from ..manifest import DEP_PREFIX, parse_manifest
from ..safety import check_name, split_package_id
from ..skillheader import SkillHeader, dependency_id, read_skill_header
from .files import MANIFEST, FileRecord, hash_files, walk_package

INTENTS = "intents.json"
MAIN = "ontoskill.ttl"
DEFAULT_VERSION = "0.1.0"


@dataclass
class PackResult:
    root: Path
    manifest: dict[str, Any]
    data: bytes  # the package.json bytes
    files: list[FileRecord]
    modules: dict[str, SkillHeader] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    written: bool = False

    # what `pack` reports, read from the manifest it wrote
    @property
    def path(self) -> Path:
        return self.root / "package.json"

    @property
    def package_id(self) -> str:
        return str(self.manifest["package_id"])

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def skill_ids(self) -> list[str]:
        return [s["id"] for s in self.manifest["skills"]]

    def to_json(self) -> dict[str, Any]:
        """`pack --json`."""
        return {
            "command": "pack",
            "path": str(self.path),
            "written": self.written,
            "package_id": self.manifest["package_id"],
            "version": self.manifest["version"],
            "skills": self.skill_ids,
            "modules": len(self.manifest["modules"]),
            "files": self.manifest["files"],
        }


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """Stable formatting: the key order built here, 2-space indent, trailing newline."""
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _existing(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        return {}
    raw = jsonio.loads(path.read_bytes(), source=str(path), max_bytes=limits.MAX_MANIFEST_BYTES)
    if not isinstance(raw, dict):
        raise FormatError(f"{path}: expected a JSON object")
    return raw


def main_modules(modules: list[str], infos: dict[str, SkillHeader]) -> list[str]:
    """A skill's main module is `ontoskill.ttl`; elsewhere, a module that extends nothing.

    (`oc:extends` also links a main skill to another skill, so it alone does not decide.)
    """
    folders = {p.rsplit("/", 1)[0] if "/" in p else "" for p in modules if _base(p) == MAIN}
    out = []
    for p in modules:
        folder = p.rsplit("/", 1)[0] if "/" in p else ""
        if _base(p) == MAIN or (folder not in folders and not infos[p].extends):
            out.append(p)
    return out


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def build_manifest(
    root: Path,
    *,
    package_id: str | None = None,
    version: str | None = None,
    description: str | None = None,
    exclude: frozenset[str] = frozenset(),
) -> PackResult:
    """Compute the manifest for `root` without writing anything."""
    old = _existing(root)
    pid = package_id or old.get("package_id")
    if not isinstance(pid, str):
        raise UsageError(
            f"{root}: no package id", hint="pass --id author/package (or keep it in package.json)"
        )
    split_package_id(pid, "package id")
    ver = version or old.get("version") or DEFAULT_VERSION
    if not isinstance(ver, str):
        ver = str(ver)
    desc = description if description is not None else old.get("description", "")
    old_skills = {
        s.get("id"): s for s in old.get("skills", []) if isinstance(s, dict) and "id" in s
    }

    paths = walk_package(root, exclude=exclude)
    records = hash_files(root, paths)
    modules = [p for p in paths if p.endswith(".ttl")]
    infos = {p: read_skill_header((root / p).read_bytes(), p, lenient=False) for p in modules}
    skills: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for path in main_modules(modules, infos):
        info = infos[path]
        sid = check_name(info.identifier, f"dcterms:identifier of {path}")
        if sid in seen:
            raise FormatError(f"skill id {sid!r} is the identifier of {seen[sid]} and {path}")
        seen[sid] = path
        prev = old_skills.get(sid, {})
        entry: dict[str, Any] = {
            "id": sid,
            "path": path,
            "default_enabled": prev.get("default_enabled", True) is not False,
            "aliases": list(info.aliases),
            "description": info.description or "",
            "category": info.category or "general",
            "intents": list(info.intents),
            "depends_on_skills": [DEP_PREFIX + dependency_id(d) for d in info.depends_on],
        }
        if info.is_user_invocable is not None:
            entry["is_user_invocable"] = info.is_user_invocable
        skills.append(entry)
    if not skills:
        raise FormatError(
            f"{root}: no skill found (no .ttl module without oc:extends)",
            hint="compile your skills first, or use `ontoskills pack --from-skill-md`",
        )
    manifest: dict[str, Any] = {
        "package_id": pid,
        "version": ver,
        "description": desc or "",
        "source_kind": "ontology",
        "modules": modules,
        "embedding_files": [p for p in paths if _base(p) == INTENTS],
        "skills": skills,
        "files": [r.to_json() for r in records],
    }
    data = manifest_bytes(manifest)
    parse_manifest(data, source=f"{root}/{MANIFEST}")  # what we write must read back
    return PackResult(root, manifest, data, records, infos)


def pack(
    root: Path,
    *,
    package_id: str | None = None,
    version: str | None = None,
    description: str | None = None,
    exclude: frozenset[str] = frozenset(),
    write: bool = True,
) -> PackResult:
    """Build the manifest and write `root/package.json` (only when its bytes change)."""
    result = build_manifest(
        root, package_id=package_id, version=version, description=description, exclude=exclude
    )
    target = root / MANIFEST
    if write and (not target.is_file() or target.read_bytes() != result.data):
        atomic_write_bytes(target, result.data)
        result.written = True
    return result
