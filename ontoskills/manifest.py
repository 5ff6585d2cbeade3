"""Typed models of the registry formats: index.json and package.json (intents.json: intents.py).

Parsing validates shape, names and paths and tolerates the real OntoStore's historical
variants (see ../shared/ontostore/QUIRKS.md and docs/FORMATS.md):
- `manifest_url` instead of `manifest_path` (relative, or absolute under the registry base);
- package ids that are not `author/pkg` (dotted) when the manifest path says what they are;
- missing `source_kind`, `aliases`, `intents`, `depends_on_skills`;
- dependency names written `ontoskills-<skill-id>`.
A package's own `trust_tier` is kept only as `declared_tier`: the index decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urljoin, urlsplit

from . import jsonio, limits
from .choices import Choice
from .errors import FormatError, LimitExceededError, UnsafePathError
from .safety import (
    check_name,
    check_relpath,
    find_path_collision,
    is_valid_name,
    split_package_id,
)
from .tables import Table


class Tier(Choice):
    """A registry's trust tiers, lowest first (index.json, the lock, `--min-trust`, `--trust`)."""

    COMMUNITY = "community"
    VERIFIED = "verified"
    OFFICIAL = "official"


LOCAL_TIER = "local"  # skills under ontologies/ outside author/: ranked as official
_TIER_RANK = {Tier.COMMUNITY: 0, Tier.VERIFIED: 1, Tier.OFFICIAL: 2, LOCAL_TIER: 2}
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_MANIFEST_PATH_RE = re.compile(r"^(?:.*/)?packages/([^/]+)/([^/]+)/package\.json$")
DEP_PREFIX = "ontoskills-"


def normalize_tier(raw: object) -> str:
    """Index tier -> known tier; anything missing or unknown is community."""
    return str(Tier.get(raw) or Tier.COMMUNITY)


def tier_rank(tier: str) -> int:
    return _TIER_RANK.get(tier, 0)


def cap_tier(tier: str, cap: str | None) -> str:
    if cap is None:
        return tier
    return tier if tier_rank(tier) <= tier_rank(cap) else cap


# --------------------------------------------------------------------------- index.json


@dataclass(frozen=True)
class IndexEntry:
    package_id: str
    trust_tier: str
    manifest_path: str
    source_kind: str = "ontology"
    declared_tier: str | None = None

    @property
    def package_root(self) -> str:
        """Registry-relative folder of the package (manifest's parent)."""
        return self.manifest_path.rsplit("/", 1)[0] if "/" in self.manifest_path else ""


@dataclass(frozen=True)
class RegistryIndex:
    entries: tuple[IndexEntry, ...]
    warnings: tuple[str, ...] = ()
    _by_id: dict[str, IndexEntry] = field(default_factory=dict, compare=False, repr=False)

    def get(self, package_id: str) -> IndexEntry | None:
        if not self._by_id:
            self._by_id.update((e.package_id, e) for e in self.entries)
        return self._by_id.get(package_id)

    def __iter__(self) -> Iterator[IndexEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def _manifest_rel(obj: Table, base_url: str | None) -> str:
    path = obj.get("manifest_path", str)
    if path is None:
        url = obj.get("manifest_url", str)
        if url is None:
            raise FormatError(f"{obj.where}: missing field 'manifest_path'")
        path = _relative_to_base(url, base_url, obj.where)
    return check_relpath(path, f"manifest path in {obj.where}")


def _relative_to_base(url: str, base_url: str | None, where: str) -> str:
    """Turn a historical absolute manifest_url into a registry-relative path, same host only."""
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        return url
    if base_url is None:
        raise UnsafePathError(f"{where}: absolute manifest_url {url!r} in a non-URL registry")
    base = urljoin(base_url if base_url.endswith("/") else base_url + "/", ".")
    if not url.startswith(base):
        raise UnsafePathError(f"{where}: manifest_url {url!r} points outside the registry")
    return url[len(base) :]


def parse_index(data: bytes, *, source: str, base_url: str | None = None) -> RegistryIndex:
    raw = jsonio.loads(
        data, source=source, max_bytes=limits.MAX_INDEX_BYTES, max_items=limits.MAX_INDEX_ITEMS
    )
    top = Table(raw, source, FormatError, null_is_absent=True)
    entries: list[IndexEntry] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(top.required("packages", list)):
        obj = top.child(item, f"packages[{i}]")
        manifest_path = _manifest_rel(obj, base_url)
        package_id = obj.get("package_id", str)
        if not (isinstance(package_id, str) and package_id.count("/") == 1):
            # Historical dotted ids: the layout packages/<author>/<pkg>/ is authoritative.
            m = _MANIFEST_PATH_RE.match(manifest_path)
            if not m:
                raise UnsafePathError(f"{obj.where}: invalid package id {package_id!r}")
            warnings.append(f"{obj.where}: package id {package_id!r} read as {m[1]}/{m[2]}")
            package_id = f"{m[1]}/{m[2]}"
        split_package_id(package_id, f"package id in {obj.where}")
        if package_id in seen:
            raise FormatError(f"{source}: package {package_id} listed twice")
        seen.add(package_id)
        declared = obj.data.get("trust_tier")
        tier = normalize_tier(declared)
        if declared is not None and declared != tier:
            warnings.append(f"{package_id}: unknown trust tier {declared!r}, using community")
        entries.append(
            IndexEntry(
                package_id=package_id,
                trust_tier=tier,
                manifest_path=manifest_path,
                source_kind=obj.get("source_kind", str, "ontology"),
                declared_tier=declared if isinstance(declared, str) else None,
            )
        )
    return RegistryIndex(tuple(entries), tuple(warnings))


# --------------------------------------------------------------------------- package.json


@dataclass(frozen=True)
class SkillEntry:
    id: str
    path: str
    default_enabled: bool = True
    aliases: tuple[str, ...] = ()
    description: str = ""
    category: str | None = None
    intents: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    is_user_invocable: bool | None = None

    @property
    def dir(self) -> str:
        """Folder of the skill's main module, '' when it sits at the package root."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str | None
    size: int | None
    executable: bool = False


@dataclass(frozen=True)
class Manifest:
    package_id: str
    version: str
    modules: tuple[str, ...]
    embedding_files: tuple[str, ...]
    skills: tuple[SkillEntry, ...]
    files: tuple[FileEntry, ...] | None = None
    source_kind: str = "ontology"
    declared_tier: str | None = None
    description: str = ""

    def skill(self, skill_id: str) -> SkillEntry | None:
        return next((s for s in self.skills if s.id == skill_id), None)

    def owner_of(self, path: str) -> SkillEntry | None:
        """The skill a package file belongs to, for every reader (install's skill selection,
        the catalog's sub-modules, assets and intents, intent vectors, the reference index):
        the skill whose main module it is; else the skill whose folder is the deepest one
        holding it (the first listed when several share a folder); None for a package-level
        file. A module's `oc:extends` does not move it: enable/disable and installing one
        skill act on folders, so the catalog must group files the same way."""
        mains, folders = self._owners
        if path in mains:
            return mains[path]
        folder = path
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            if folder in folders:
                return folders[folder]
        return folders.get("")

    @cached_property
    def _owners(self) -> tuple[dict[str, SkillEntry], dict[str, SkillEntry]]:
        # per-path lookups stay O(depth) for the 10,000 files x 5,000 skills a manifest may hold
        mains: dict[str, SkillEntry] = {}
        folders: dict[str, SkillEntry] = {}
        for s in self.skills:
            mains.setdefault(s.path, s)
            folders.setdefault(s.dir, s)
        return mains, folders

    def listed_paths(self) -> list[str]:
        """Every path the manifest mentions, for sources that cannot list folders."""
        paths = {*self.modules, *self.embedding_files, *(s.path for s in self.skills)}
        if self.files is not None:
            paths.update(f.path for f in self.files)
        return sorted(paths)


def dependency_name(raw: str) -> str:
    """'ontoskills-writing-plans' -> 'writing-plans' (the store's spelling)."""
    return raw[len(DEP_PREFIX) :] if raw.startswith(DEP_PREFIX) else raw


def _parse_skill(obj: Table) -> SkillEntry:
    where = obj.where
    skill_id = check_name(obj.required("id", str), f"skill id in {where}")
    deps = []
    for dep in obj.list_of("depends_on_skills", str):
        name = dependency_name(dep)
        if not is_valid_name(name):
            raise UnsafePathError(f"{where}: invalid dependency name {dep!r}")
        deps.append(name)
    category = obj.get("category", str)
    return SkillEntry(
        id=skill_id,
        path=check_relpath(obj.required("path", str), f"skill path in {where}"),
        default_enabled=obj.get("default_enabled", bool, True),
        aliases=tuple(obj.list_of("aliases", str)),
        description=obj.get("description", str, ""),
        category=category,
        intents=tuple(obj.list_of("intents", str)),
        depends_on=tuple(deps),
        is_user_invocable=obj.data.get("is_user_invocable")
        if isinstance(obj.data.get("is_user_invocable"), bool)
        else None,
    )


def _parse_file(obj: Table) -> FileEntry:
    where = obj.where
    sha = obj.get("sha256", str)
    if sha is not None and not SHA256_RE.match(sha):
        raise FormatError(f"{where}: sha256 must be 64 lowercase hex characters")
    size = obj.get("size", int)
    if size is not None and size < 0:
        raise FormatError(f"{where}: size must be >= 0")
    if size is not None and size > limits.MAX_FILE_BYTES:
        raise LimitExceededError(f"{where}: declared size {size} exceeds the file size limit")
    return FileEntry(
        path=check_relpath(obj.required("path", str), f"file path in {where}"),
        sha256=sha,
        size=size,
        executable=obj.get("executable", bool, False),
    )


def parse_manifest(data: bytes, *, source: str, expected_id: str | None = None) -> Manifest:
    raw = jsonio.loads(data, source=source, max_bytes=limits.MAX_MANIFEST_BYTES)
    obj = Table(raw, source, FormatError, null_is_absent=True)
    package_id = (
        obj.required("package_id", str)
        if expected_id is None
        else obj.get("package_id", str, expected_id)
    )
    if expected_id is not None and package_id != expected_id:
        raise FormatError(
            f"{source}: package_id {package_id!r} does not match the index entry {expected_id!r}"
        )
    split_package_id(package_id, f"package id in {source}")
    version = obj.data.get("version")
    if not isinstance(version, (str, int, float)) or isinstance(version, bool):
        raise FormatError(f"{source}: missing or invalid 'version'")
    skills_raw = obj.get("skills", list, [])
    if len(skills_raw) > limits.MAX_SKILLS_PER_PACKAGE:
        raise LimitExceededError(f"{source}: more than {limits.MAX_SKILLS_PER_PACKAGE} skills")
    skills = tuple(_parse_skill(obj.child(s, f"skills[{i}]")) for i, s in enumerate(skills_raw))
    ids = [s.id for s in skills]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise FormatError(f"{source}: duplicate skill ids {', '.join(dup)}")
    files = None
    if "files" in obj.data and obj.data["files"] is not None:
        files_raw = obj.get("files", list, [])
        if len(files_raw) > limits.MAX_PACKAGE_FILES:
            raise LimitExceededError(f"{source}: more than {limits.MAX_PACKAGE_FILES} files")
        files = tuple(_parse_file(obj.child(f, f"files[{i}]")) for i, f in enumerate(files_raw))
        paths = [f.path for f in files]
        if len(set(paths)) != len(paths):
            raise FormatError(f"{source}: duplicate paths in 'files'")
    declared = obj.data.get("trust_tier")
    manifest = Manifest(
        package_id=package_id,
        version=str(version),
        modules=tuple(
            check_relpath(p, f"module path in {source}") for p in obj.list_of("modules", str)
        ),
        embedding_files=tuple(
            check_relpath(p, f"embedding path in {source}")
            for p in obj.list_of("embedding_files", str)
        ),
        skills=skills,
        files=files,
        source_kind=obj.get("source_kind", str, "ontology"),
        declared_tier=declared if isinstance(declared, str) else None,
        description=obj.get("description", str, "") or "",
    )
    # 'a' and 'a/b' (or 'A' and 'a') cannot both be files: an OS error at install otherwise
    collision = find_path_collision([*manifest.listed_paths(), "package.json"])
    if collision is not None:
        raise UnsafePathError(
            f"{source}: {collision[0]!r} and {collision[1]!r} cannot both be files "
            "(one is the folder of the other, or they differ only in case)"
        )
    return manifest
