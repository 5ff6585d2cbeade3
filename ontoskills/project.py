"""The project manifest `ontoskills.toml` and how a command finds it (issue 24).

A project is a folder with an `ontoskills.toml` (hand-edited, committed) beside its
`ontoskills.lock` (generated, committed) and its tree `.ontoskills/` (the layout of a home,
ignored by git). Discovery walks up from the current folder to `/` (cargo, uv); a member
of a workspace walks further up to the root whose `[workspace] members` list it, and the
root's lock and tree serve every member.

Every value is read through `tables.Table` (exit 2 naming the file, the line when it can
be found, and the key path); an unknown key is refused, so adding one is one word in the
`*_KEYS` tuples below. Tokens are never stored here: a registry's token comes from the
environment (docs/SECURITY.md). Edits (`projectedit.py`) keep comments and layout.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import limits, tomlio
from .config import ENCODER_KEYS, encoder_values
from .errors import ConfigError, UnsafePathError, UsageError
from .manifest import Tier
from .registries import RegistryConfig, RegistryKind, detect_kind, same_location
from .safety import is_valid_name, parse_spec
from .tables import Table

MANIFEST_NAME = "ontoskills.toml"
TREE_NAME = ".ontoskills"
LOCK_NAME = "ontoskills.lock"

# The keys each table accepts; anything else is exit 2 naming it (a typo must not be ignored).
TOP_KEYS = ("dependencies", "registries", "embeddings", "policy", "workspace")
DEPENDENCY_KEYS = ("skills", "registry", "version")
REGISTRY_KEYS = ("url", "kind", "trust", "root", "package_id")
EMBEDDINGS_KEYS = ("enabled", "model", "revision", "path")
POLICY_KEYS = ("min_trust", "require_signed", "allowed_registries")
WORKSPACE_KEYS = ("members",)
# What a project tree may hold at its top (the layout of a home: paths.py): anything else
# means `.ontoskills/` is someone else's folder, and we do not write into it.
TREE_ENTRIES = frozenset({"ontologies", "state", ".staging"})


@dataclass(frozen=True)
class Dependency:
    """One `[dependencies]` entry: a package, some of its skills (None: all), the registry
    it must come from (a name in the manifest or config.toml), an exact version."""

    package_id: str
    skills: tuple[str, ...] | None = None
    registry: str | None = None
    version: str | None = None
    manifest: Path = field(default=Path(MANIFEST_NAME), compare=False)

    def specs(self) -> list[str]:
        """The lock's `requested` specs this dependency stands for."""
        if self.skills is None:
            return [self.package_id]
        return sorted(f"{self.package_id}/{s}" for s in self.skills)


@dataclass(frozen=True)
class Policy:
    min_trust: str | None = None
    require_signed: bool = False
    allowed_registries: tuple[str, ...] | None = None  # None: any


@dataclass(frozen=True)
class ProjectEmbeddings:
    enabled: bool = False
    model: str | None = None
    revision: str | None = None
    path: Path | None = None  # absolute (written relative to the manifest)
    # the encoder settings the manifest sets (config.ENCODER_KEYS: pooling, prefixes,
    # max_tokens, dimension), over config.toml's for this project's tree; unset: absent
    encoder: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectManifest:
    path: Path
    dependencies: dict[str, Dependency]
    registries: tuple[RegistryConfig, ...] = ()
    embeddings: ProjectEmbeddings = field(default_factory=ProjectEmbeddings)
    policy: Policy = field(default_factory=Policy)
    members: tuple[str, ...] | None = None  # `[workspace] members`: a workspace root


@dataclass(frozen=True)
class Project:
    root: Path  # the folder of the root manifest (the workspace root, or the project)
    manifest: ProjectManifest  # the root's
    here: ProjectManifest  # the nearest manifest: what `add` and `remove` edit
    members: tuple[ProjectManifest, ...] = ()

    @property
    def home_dir(self) -> Path:
        return self.root / TREE_NAME

    @property
    def lockfile(self) -> Path:
        return self.root / LOCK_NAME

    @property
    def manifests(self) -> tuple[ProjectManifest, ...]:
        return (self.manifest, *self.members)

    def dependencies(self) -> dict[str, Dependency]:
        """Every manifest's dependencies merged; the same package declared differently in
        two of them is exit 2 naming both files."""
        out: dict[str, Dependency] = {}
        for m in self.manifests:
            for pid, dep in m.dependencies.items():
                seen = out.get(pid)
                if seen is not None and seen != dep:
                    raise ConfigError(
                        f"{pid} is declared differently in {seen.manifest} and {dep.manifest}",
                        hint="declare it the same way in both (skills, registry, version), "
                        "or in the workspace root only",
                    )
                out[pid] = dep
        return dict(sorted(out.items()))

    def registries(self) -> list[RegistryConfig]:
        """Every manifest's `[registries]`, the root's first; one name at two locations
        is exit 2."""
        out: dict[str, tuple[RegistryConfig, Path]] = {}
        for m in self.manifests:
            for reg in m.registries:
                seen = out.get(reg.name)
                if seen is not None and not same_location(seen[0].url, reg.url):
                    raise ConfigError(
                        f"registry {reg.name} names two locations: in {seen[1]} and {m.path}",
                        hint="give one of them another name",
                    )
                out.setdefault(reg.name, (reg, m.path))
        return [reg for reg, _ in out.values()]


# ------------------------------------------------------------------------- reading
def _line_of(text: str, section: str, key: str | None) -> int | None:
    """The line of `key` in table `section` ("" for the top), or of the table's header."""
    current = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            current = line.strip("[] ").split("]")[0].replace('"', "").replace("'", "")
            if key is None and current == section:
                return n
            if key is not None and current in (f"{section}.{key}" if section else key,):
                return n  # a table's own header: `[dependecies]`, `[registries.corp]`
            continue
        if key is not None and current == section and "=" in line:
            name = line.split("=", 1)[0].strip().strip("\"'")
            if name == key or name.split(".", 1)[0].strip().strip("\"'") == key:
                return n
    return None


class _Reader:
    """The manifest's text and path: each Table it makes names the line of what it reads."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text

    def table(self, data: object, section: str, key: str | None = None) -> Table:
        line = _line_of(self.text, section, key)
        source = f"{self.path}:{line}" if line else str(self.path)
        where = f"{section}.{key}" if section and key else (section or key or "")
        return Table(data, source, ConfigError, path=where, hint=f"fix {self.path}")

    def at(self, data: dict[str, Any], section: str, key: str) -> Table:
        """The table `section` for reading its value `key`: its errors name the key's line
        and `section.key` once (a `table(data, section, key)` would say `section.key.key`)."""
        line = _line_of(self.text, section, key)
        source = f"{self.path}:{line}" if line else str(self.path)
        return Table(data, source, ConfigError, path=section, hint=f"fix {self.path}")

    def known(
        self, data: dict[str, Any], section: str, keys: tuple[str, ...], entry: Table | None = None
    ) -> None:
        """Refuse a key not in `keys`; `entry`: the inline table holding them, whose line
        is named when the key's own is not found (`"a/b" = { skils = [] }`)."""
        for k in data:
            if k not in keys:
                message = f"is not a known key (known: {', '.join(keys)})"
                if entry is not None and _line_of(self.text, section, k) is None:
                    entry.fail(message, k)
                self.table({}, section, k).fail(message)

    def section(self, top: dict[str, Any], name: str) -> dict[str, Any]:
        raw = top.get(name, {})
        if not isinstance(raw, dict):
            self.table({}, "", name).fail("must be a table")
        return raw


def load_manifest(path: Path) -> ProjectManifest:
    """Read and check one `ontoskills.toml` (exit 2 naming file, line and key)."""
    try:
        raw = limits.read_regular_file(
            path, limits.MAX_CONFIG_BYTES, what="project manifest", error=ConfigError
        )
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = tomlio.loads(
        raw, source=str(path), error=ConfigError, max_bytes=limits.MAX_CONFIG_BYTES,
        hint="fix the file",
    )  # fmt: skip
    r = _Reader(path, raw.decode("utf-8"))
    r.known(data, "", TOP_KEYS)
    regs = _registries(r, r.section(data, "registries"))
    return ProjectManifest(
        path=path,
        dependencies=_dependencies(r, r.section(data, "dependencies")),
        registries=regs,
        embeddings=_embeddings(r, r.section(data, "embeddings")),
        policy=_policy(r, r.section(data, "policy")),
        members=_members(r, data),
    )


def _dependencies(r: _Reader, deps: dict[str, Any]) -> dict[str, Dependency]:
    out = {}
    for spec, raw in deps.items():
        t = r.table(raw, "dependencies", spec)
        r.known(t.data, f"dependencies.{spec}", DEPENDENCY_KEYS, t)
        try:
            pid, skill = parse_spec(spec)
        except UsageError:
            t.fail("is not a package id (author/package)")
        if skill is not None or pid != spec:
            t.fail("must name a package (author/package); name skills in `skills = [...]`")
        skills = None
        if t.has("skills"):
            names = t.list_of("skills", str)
            bad = [s for s in names if not is_valid_name(s)]
            if bad or not names:
                t.fail(f"must list skill names, got {(bad or names)!r:.80}", "skills")
            skills = tuple(sorted(set(names)))
        registry = t.get("registry", str)
        if registry is not None and not is_valid_name(registry):
            t.fail(f"is not a registry name: {registry!r:.60}", "registry")
        out[pid] = Dependency(pid, skills, registry, t.get("version", str), r.path)
    return out


def _registries(r: _Reader, regs: dict[str, Any]) -> tuple[RegistryConfig, ...]:
    out = []
    for name, raw in regs.items():
        t = r.table(raw, f"registries.{name}")
        if not is_valid_name(name):
            t.fail("is not a valid registry name")
        r.known(t.data, f"registries.{name}", REGISTRY_KEYS)
        url = t.required("url", str)
        if "://" not in url and "@" not in url:  # a folder: relative to the manifest
            url = os.path.normpath(r.path.parent / os.path.expanduser(url))
        kind = t.choice("kind", RegistryKind) or detect_kind(url)
        trust = t.choice("trust", Tier)
        root = t.get("root", str)
        if root:  # a TUF root file: relative to the manifest too
            root = os.path.normpath(r.path.parent / root)
        package_id = t.get("package_id", str)  # kind skills: the repository's one package
        tier = None if trust is None else str(trust)
        try:
            out.append(RegistryConfig(name, url, kind, tier, root, package_id))
        except ConfigError as exc:
            key = "package_id" if "package id" in exc.message else "url"
            r.table({}, f"registries.{name}", key).fail(exc.message.split(": ", 1)[-1])
    return tuple(out)


def _embeddings(r: _Reader, raw: dict[str, Any]) -> ProjectEmbeddings:
    r.known(raw, "embeddings", (*EMBEDDINGS_KEYS, *ENCODER_KEYS))
    get = lambda key, kind: r.at(raw, "embeddings", key).get(key, kind)  # noqa: E731
    path = get("path", str)
    encoder: dict[str, Any] = {}
    for key in ENCODER_KEYS:  # config.toml's validator, one key at a time to name its line
        encoder.update(encoder_values(r.at(raw, "embeddings", key), (key,)))
    return ProjectEmbeddings(
        enabled=bool(get("enabled", bool)) or path is not None,
        model=get("model", str),
        revision=get("revision", str),
        path=None if not path else Path(os.path.normpath(r.path.parent / path)),
        encoder=encoder,
    )


def _policy(r: _Reader, raw: dict[str, Any]) -> Policy:
    r.known(raw, "policy", POLICY_KEYS)
    trust = r.at(raw, "policy", "min_trust").choice("min_trust", Tier)
    allowed = None
    if "allowed_registries" in raw:
        t = r.at(raw, "policy", "allowed_registries")
        allowed = tuple(t.list_of("allowed_registries", str))
    return Policy(
        min_trust=None if trust is None else str(trust),
        require_signed=bool(r.at(raw, "policy", "require_signed").get("require_signed", bool)),
        allowed_registries=allowed,
    )


def _members(r: _Reader, data: dict[str, Any]) -> tuple[str, ...] | None:
    if "workspace" not in data:
        return None
    raw = r.section(data, "workspace")
    r.known(raw, "workspace", WORKSPACE_KEYS)
    t = r.table(raw, "workspace", "members")
    globs = t.list_of("members", str)
    for g in globs:
        parts = Path(g).parts
        if not g or Path(g).is_absolute() or ".." in parts:
            t.fail(f"must be folders inside the workspace, got {g!r:.80}", "members")
    return tuple(globs)


# ----------------------------------------------------------------------- discovery
def member_dirs(root: ProjectManifest) -> list[Path]:
    """The folders `[workspace] members` match that hold a manifest (sorted)."""
    base = root.path.parent
    found: set[Path] = set()
    for pattern in root.members or ():
        for p in base.glob(pattern):
            if p.is_dir() and (p / MANIFEST_NAME).is_file() and p != base:
                found.add(Path(os.path.abspath(p)))
    return sorted(found)


def _upward(start: Path) -> Iterator[Path]:
    yield start
    yield from start.parents


def _manifest_in(folder: Path) -> bool:
    """Whether `folder` holds a manifest we may use. One in a folder anyone may write to
    (`/tmp`, sticky or not) is ignored: another user could have planted it there to send
    every command run below it to their registries and their tree (git's safe.directory
    guards the same walk)."""
    if not (folder / MANIFEST_NAME).is_file():
        return False
    try:
        return not os.stat(folder).st_mode & stat.S_IWOTH
    except OSError:
        return False


def discover(start: Path) -> Project | None:
    """The project `start` (a folder) is in: the first manifest upward, and the workspace
    root that lists it when there is one; None outside any project."""
    start = Path(os.path.abspath(start))
    nearest = next((d for d in _upward(start) if _manifest_in(d)), None)
    if nearest is None:
        return None
    here = load_manifest(nearest / MANIFEST_NAME)
    root = here
    if here.members is None:
        for d in nearest.parents:
            if _manifest_in(d):
                candidate = load_manifest(d / MANIFEST_NAME)
                if candidate.members is not None and nearest in member_dirs(candidate):
                    root = candidate
                break  # cargo: the first manifest above decides
    members = tuple(load_manifest(d / MANIFEST_NAME) for d in member_dirs(root))
    members = tuple(m for m in members if m.path != root.path)
    project = Project(root.path.parent, root, here, members)
    check_tree(project.home_dir)
    return project


def check_tree(tree: Path) -> None:
    """`.ontoskills/` must be a real folder of ours: a symlink (which would send installs
    anywhere) or a folder holding what a home never holds is refused."""
    if os.path.islink(tree):
        raise UnsafePathError(
            f"{tree} is a symlink; a project's tree must be a real folder",
            hint=f"remove the symlink ({tree}); the next sync recreates the folder",
        )
    if not os.path.lexists(tree):
        return
    if not tree.is_dir():
        raise ConfigError(f"{tree} is not a folder", hint="move it away; sync recreates it")
    foreign = sorted(e.name for e in os.scandir(tree) if e.name not in TREE_ENTRIES)
    if foreign:
        raise ConfigError(
            f"{tree} holds {foreign[0]!r}, which is not part of an ontoskills tree",
            hint=f"move it out of {tree} (ontoskills owns that folder)",
        )
