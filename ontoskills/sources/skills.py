"""A registry that is an Agent Skills repository (kind `skills`): a git repository or a folder
of SKILL.md folders (anthropics/skills, obra/superpowers, ...), read as ONE package.

The bytes come from the wrapped git or folder source (commit pinning, symlink and size refusal,
offline clones: sources/git.py, sources/folder.py); this module presents them the way the
installer reads every registry, so locks, ci, update, outdated, doctor, remove and
enable/disable work unchanged:

    index.json                          one entry, `packages/<author>/<pkg>/package.json`
    packages/<author>/<pkg>/package.json   generated: skills, modules, the generated files
    packages/<author>/<pkg>/<dir>/ontoskill.ttl   generated per skill (ontoskills/skillmd.py)
    packages/<author>/<pkg>/<path>      the authors' file at <path>, byte for byte

Skills: every folder holding a regular SKILL.md (skills/*, plugins/*/skills/*, .claude/skills/*,
the root, anywhere), except `.git`, `node_modules` and scaffolds (a folder named `template`
or `templates`, or under one: the spec's skill template, placeholder text, not a skill). Skill
id = the folder name (a root SKILL.md: its frontmatter name); a different frontmatter `name`
is a warning naming both. A skill's files are everything under its folder. Symlinks outside
skill folders are ignored; inside one they are refused with a warning (never followed, never
installed). A SKILL.md without valid frontmatter, over the size limit or with an invalid
folder name skips that skill with a warning naming the file. Sizes are checked from the tree
before anything is read.

Version: `0.0.0+g<commit12>` for a git repository (the commit every read uses); for a folder
`0.0.0+h<12 hex>`, a hash of every installed path and its content. Trust: `community` (the
index says so; a registry's `trust` cap can only lower it). docs/CLI.md "Agent Skills
repositories".
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .. import limits
from ..errors import LimitExceededError, NotFoundError, OntoskillsError, UsageError
from ..manifest import RegistryIndex, Tier
from ..paths import expand_user
from ..registries import RegistryConfig, RegistryKind, skills_package_id
from ..safety import check_relpath, find_hidden_unicode, is_valid_name, split_package_id
from ..skillmd import SKILL_MD, parse_skill_md, skill_turtle
from ._gitremote import is_network_remote
from .base import (
    BaseSource,
    IndexSnapshot,
    RemoteFile,
    SourceOptions,
    TreeEntry,
    parse_registry_index,
)

MODULE = "ontoskill.ttl"  # the generated module beside each SKILL.md (publish/pack.MAIN)
MANIFEST = "package.json"
SKIP_DIRS = frozenset({".git", "node_modules"})
SCAFFOLDS = frozenset({"template", "templates"})
MAX_TREE_ENTRIES = 200_000  # a repository's whole tree is listed once per command


@dataclass
class Package:
    package_id: str
    version: str
    files: dict[str, RemoteFile]  # package-relative path -> authors' file or generated one
    generated: dict[str, bytes]  # package.json and the compiled modules
    warnings: list[str] = field(default_factory=list)


def is_git_location(url: str) -> bool:
    """Whether a skills registry's location is a git repository (else a plain folder)."""
    base = url.split("#", 1)[0]
    if base.startswith("git+") or is_network_remote(base) or base.rstrip("/").endswith(".git"):
        return True
    path = expand_user(base[len("file://") :] if base.startswith("file://") else base)
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def walk_folder(root: Path) -> list[TreeEntry]:
    """Every entry under a folder, symlinks reported (never followed), bounded."""
    out: list[TreeEntry] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in [*dirnames, *filenames]:
            full = Path(dirpath, name)
            st = os.lstat(full)
            rel = full.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out.append(TreeEntry(rel, "link"))
                if name in dirnames:
                    dirnames.remove(name)
            elif stat.S_ISREG(st.st_mode):
                out.append(TreeEntry(rel, "file", st.st_size, bool(st.st_mode & stat.S_IXUSR)))
            elif not stat.S_ISDIR(st.st_mode):
                out.append(TreeEntry(rel, "other"))
            if len(out) > MAX_TREE_ENTRIES:
                raise LimitExceededError(f"{root}: more than {MAX_TREE_ENTRIES} entries")
    return sorted(out, key=lambda e: e.path)


def _skill_dirs(entries: list[TreeEntry], warnings: list[str]) -> list[str]:
    dirs = []
    for e in entries:
        folder, _, name = e.path.rpartition("/")
        if name != SKILL_MD or SCAFFOLDS.intersection(e.path.split("/")[:-1]):
            continue
        if e.kind != "file":
            warnings.append(f"{_show(e.path)}: not a regular file (a symlink?), skill skipped")
            continue
        dirs.append(folder)
    return sorted(dirs)


def _show(path: str) -> str:
    """A repository's path as a warning shows it: escaped when it holds characters a
    terminal would act on or hide (control, bidi, zero-width), cut at 200 characters."""
    return path[:200] if path.isprintable() else repr(path[:200])


def _valid_path(path: str) -> bool:
    """A path the manifest and the home accept (safety.check_relpath: no `..`, no control
    characters, no backslashes, bounded): others would refuse the whole package."""
    try:
        check_relpath(path)
    except OntoskillsError:
        return False
    return True


def _file_problem(e: TreeEntry, generated: dict[str, bytes]) -> str | None:
    """Why a file inside a skill folder is not installed, or None when it is."""
    if not _valid_path(e.path):
        return "not a portable file name, skipped"
    if e.kind == "link":
        return "a symlink inside a skill folder: refused, not followed"
    if e.kind != "file":
        return "not a regular file, skipped"
    if e.size > limits.MAX_FILE_BYTES:
        return f"{e.size} bytes, over the per-file limit: skipped"
    if e.path in generated or e.path == MANIFEST:
        return "replaced by the generated file of the same name"
    return None


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


class SkillsSource(BaseSource):
    kind = RegistryKind.SKILLS

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        super().__init__(config, options)
        self.inner: BaseSource
        if is_git_location(config.url):
            from .git import GitSource  # pygit2: only for a git repository

            inner = RegistryConfig(config.name, config.url, RegistryKind.GIT, config.trust)
            self.inner = GitSource(inner, options, pin=pin)
        else:
            from .folder import FolderSource

            inner = RegistryConfig(config.name, config.url, RegistryKind.FOLDER, config.trust)
            self.inner = FolderSource(inner, options)
        self.vcs = self.inner.vcs
        self.is_local = self.inner.is_local
        self._lock = threading.Lock()
        self._packages: dict[str, Package] = {}

    @property
    def commit(self) -> str | None:
        return self.inner.commit

    def package_id(self) -> str:
        pid = self.config.package_id or skills_package_id(self.config.url)
        if pid is None:
            raise UsageError(
                f"registry {self.config.name}: no package id for the Agent Skills repository "
                f"at {self.config.url}",
                hint=f"add it with `ontoskills registry add {self.config.name} "
                f"{self.config.url} --kind skills --package-id AUTHOR/PKG`",
            )
        return pid

    # the registry as the installer reads it -----------------------------------------
    def load_index(self) -> IndexSnapshot:
        pid = self.package_id()
        pkg = self.package(pid)
        entry = {
            "package_id": pid,
            "manifest_path": f"packages/{pid}/{MANIFEST}",
            "trust_tier": str(Tier.COMMUNITY),
            "source_kind": "skills",
        }
        data = json.dumps({"packages": [entry]}, sort_keys=True).encode()
        index = parse_registry_index(self.config, data)
        index = RegistryIndex(index.entries, (*index.warnings, *pkg.warnings))
        return IndexSnapshot(index, hashlib.sha256(data).hexdigest(), self.commit)

    def _locate(self, relpath: str) -> tuple[Package, str]:
        parts = relpath.split("/")
        if len(parts) < 4 or parts[0] != "packages":
            raise NotFoundError(f"{self.config.name}: {relpath} not found")
        pid = f"{parts[1]}/{parts[2]}"
        try:
            split_package_id(pid)
        except OntoskillsError:
            raise NotFoundError(f"{self.config.name}: {relpath} not found") from None
        pkg = self.package(pid)
        rest = "/".join(parts[3:])
        if rest not in pkg.generated and rest not in pkg.files:
            raise NotFoundError(f"{self.config.name}: {relpath} not found")
        return pkg, rest

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        pkg, rest = self._locate(relpath)
        data = pkg.generated.get(rest)
        if data is None:
            return self.inner.read(rest, max_bytes=max_bytes)
        if len(data) > max_bytes:
            raise LimitExceededError(f"{self.config.name}: {relpath} is larger than {max_bytes}")
        return data

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        pkg, rest = self._locate(relpath)
        data = pkg.generated.get(rest)
        if data is None:
            return self.inner.fetch_to(rest, dest, max_bytes=max_bytes)
        if len(data) > max_bytes:
            raise LimitExceededError(f"{self.config.name}: {relpath} is larger than {max_bytes}")
        dest.write_bytes(data)
        return hashlib.sha256(data).hexdigest(), len(data)

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        return None  # no sparse index, no TUF metadata: nothing optional to find

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        pkg, _ = self._locate(f"{package_root}/{MANIFEST}")
        return [pkg.files[p] for p in sorted(pkg.files)]

    def close(self) -> None:
        self.inner.close()

    # the repository -> one package ----------------------------------------------------
    def package(self, pid: str) -> Package:
        with self._lock:
            if pid not in self._packages:
                self._packages[pid] = self._build(pid)
            return self._packages[pid]

    def _tree(self) -> list[TreeEntry]:
        from .folder import FolderSource

        if isinstance(self.inner, FolderSource):
            return walk_folder(self.inner.root)
        from .git import GitSource

        assert isinstance(self.inner, GitSource)
        return self.inner.tree_entries(SKIP_DIRS, MAX_TREE_ENTRIES)

    def _build(self, pid: str) -> Package:
        entries = self._tree()
        warnings: list[str] = []
        modules: dict[str, bytes] = {}
        skills: list[dict[str, object]] = []
        seen: dict[str, str] = {}
        sizes = {e.path: e.size for e in entries}
        folders = _skill_dirs(entries, warnings)
        if len(folders) > limits.MAX_SKILLS_PER_PACKAGE:  # before compiling any of them
            raise LimitExceededError(
                f"{self.config.name}: {len(folders)} SKILL.md folders, over the "
                f"{limits.MAX_SKILLS_PER_PACKAGE} skills a package may hold"
            )
        for folder in folders:
            compiled = self._compile(pid, folder, sizes, seen, warnings)
            if compiled is not None:
                skills.append(compiled[0])
                modules[compiled[1]] = compiled[2]
        dirs = [str(s["dir"]) for s in skills]
        files: dict[str, RemoteFile] = {}
        for e in entries:
            if not any(_under(e.path, d) for d in dirs):
                continue  # outside every skill folder: not part of the package (symlinks too)
            problem = _file_problem(e, modules)
            if problem is None:
                files[e.path] = RemoteFile(e.path, e.size, e.executable)
            else:
                warnings.append(f"{_show(e.path)}: {problem}")
        for path, data in modules.items():
            files[path] = RemoteFile(path, len(data), False)
        version = self._version(files, modules)
        manifest = {
            "package_id": pid,
            "version": version,
            "description": f"Agent Skills repository {pid} ({len(skills)} skills)",
            "source_kind": "skills",
            "modules": sorted(modules),
            "skills": [{k: v for k, v in s.items() if k != "dir"} for s in skills],
            "files": [
                {"path": p, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
                for p, d in sorted(modules.items())
            ],
        }
        data = json.dumps(manifest, sort_keys=True, indent=1, ensure_ascii=False).encode()
        return Package(pid, version, files, {**modules, MANIFEST: data}, warnings)

    def _compile(
        self,
        pid: str,
        folder: str,
        sizes: dict[str, int],
        seen: dict[str, str],
        warnings: list[str],
    ) -> tuple[dict[str, object], str, bytes] | None:
        """One skill folder -> (its manifest entry, module path, Turtle), or None with a
        warning naming the file when it cannot be a skill."""
        path = f"{folder}/{SKILL_MD}" if folder else SKILL_MD
        if sizes.get(path, 0) > limits.MAX_SKILL_MD_BYTES:
            warnings.append(
                f"{_show(path)}: over {limits.MAX_SKILL_MD_BYTES} bytes, skill skipped (not read)"
            )
            return None
        name = folder.rsplit("/", 1)[-1] if folder else None
        if name is not None and not is_valid_name(name):
            warnings.append(
                f"{_show(path)}: folder name {name[:80]!r} is not a valid skill name "
                "(lowercase letters, digits, . _ -): skill skipped"
            )
            return None
        if not _valid_path(path):
            warnings.append(f"{_show(path)}: not a portable path, skill skipped")
            return None
        try:
            text = self.inner.read(path, max_bytes=limits.MAX_SKILL_MD_BYTES).decode("utf-8")
            skill = parse_skill_md(text, path, skill_id=name)
        except UnicodeDecodeError:
            warnings.append(f"{_show(path)}: not valid UTF-8, skill skipped")
            return None
        except OntoskillsError as exc:
            warnings.append(f"{_show(path)}: skill skipped ({exc.message})")
            return None
        declared = skill.declared_name
        if name is not None and declared != name:
            shown = declared[:80] if isinstance(declared, str) else declared
            warnings.append(
                f"{_show(path)}: frontmatter name {shown!r} differs from its folder {name!r} "
                f"(served as {name})"
            )
        named = declared if isinstance(declared, str) else ""
        hidden = find_hidden_unicode(f"{named} {skill.description}")
        if hidden:
            warnings.append(
                f"{_show(path)}: invisible/bidi characters in the frontmatter "
                f"({', '.join(sorted(set(hidden))[:5])}) that can hide instructions"
            )
        if skill.id in seen:
            warnings.append(f"{_show(path)}: skill {skill.id} is also {seen[skill.id]}: skipped")
            return None
        seen[skill.id] = path
        module = f"{folder}/{MODULE}" if folder else MODULE
        entry: dict[str, object] = {
            "id": skill.id,
            "path": module,
            "dir": folder,
            "description": skill.description,
            "category": skill.category,
            "intents": list(skill.intents),
            "aliases": list(skill.aliases),
            "depends_on_skills": list(skill.depends_on),
        }
        return entry, module, skill_turtle(pid, skill)

    def _version(self, files: dict[str, RemoteFile], modules: dict[str, bytes]) -> str:
        """The commit for git; else a hash of every path and its bytes (a folder changes
        without telling: its version must change with any installed byte)."""
        commit = self.inner.commit
        if commit is not None:
            return f"0.0.0+g{commit[:12]}"
        h = hashlib.sha256()
        for path in sorted(files):
            data = modules.get(path)
            if data is None:
                data = self.inner.read(path, max_bytes=files[path].size)
            h.update(f"{path}\0{len(data)}\0".encode())
            h.update(hashlib.sha256(data).digest())
        return f"0.0.0+h{h.hexdigest()[:12]}"
