"""Writes to the user's project files: `init` (the manifest, `.gitignore`) and the edits of
`add` and `remove` to `ontoskills.toml`, through tomlkit so comments and layout survive.

Each edit returns the bytes the file had, so a command whose install fails puts them back
(uv's `add` does the same): the manifest never names what the lock does not hold because
of a failed run. Every write is atomic and goes through a symlinked manifest (dotfiles).
"""

from __future__ import annotations

import os
from pathlib import Path

import tomlkit
from tomlkit.items import InlineTable, Table

from . import limits, tomlio
from .errors import ConfigError, UnsafePathError, UsageError
from .fsutil import atomic_write_through
from .project import LOCK_NAME, MANIFEST_NAME, TREE_NAME, discover, load_manifest

TEMPLATE = """\
# The skills this project wants. `ontoskills add author/pkg` edits this file and
# `ontoskills sync` installs what it lists into .ontoskills/, recording exact versions and
# hashes in ontoskills.lock. Commit this file and ontoskills.lock; .ontoskills/ is ignored.
# Every key: docs/LOCKFILE.md ("The project manifest").

# [registries.corp]    # same keys as config.toml; a relative path is relative to this file
# url = "https://skills.corp.example/"
# trust = "official"   # tokens never go here: ONTOSKILLS_TOKEN_FOR / the environment

# [registries.anthropics-skills]   # an Agent Skills repository (SKILL.md folders): one package;
# url = "https://github.com/anthropics/skills"  # `ontoskills add github:anthropics/skills`
# kind = "skills"                               # writes this table and the dependency
# package_id = "anthropics/skills"

# [embeddings]         # intent vectors + the ONNX encoder for every dependency
# enabled = true
# path = "models/minilm"   # a local encoder folder, relative to this file
# pooling = "mean"         # and the encoder settings of config.toml: pooling,
#                          # query_prefix, passage_prefix, max_tokens, dimension

# [policy]             # enforced by add, sync, install, ci, update and serve (exit 4)
# min_trust = "verified"
# require_signed = false
# allowed_registries = ["ontostore"]

# [workspace]          # a monorepo: one lock and one .ontoskills/ here for every member
# members = ["apps/*"]

# Last, so what `add` appends lands here, under these examples:
# "obra/superpowers" = {}                                      # the whole package
# "anthropics/claude-code" = { skills = ["hook-development"] }  # some skills (+ their deps)
# "acme/tools" = { registry = "corp" }                          # from a registry above
[dependencies]
"""

GITIGNORE_LINE = f"/{TREE_NAME}/"


def init(folder: Path) -> tuple[list[Path], Path | None]:
    """Write a commented manifest in `folder` and ignore its tree in `.gitignore`: the files
    written, and the workspace root when `folder` is one of its `[workspace] members` (a
    member has no tree or lock of its own, the root's serve it: no `.gitignore` then). An
    existing manifest is never overwritten (exit 2)."""
    manifest = folder / MANIFEST_NAME
    if os.path.lexists(manifest):
        raise UsageError(
            f"{manifest} already exists",
            hint="edit it, or add packages with `ontoskills add author/pkg`",
        )
    written = [manifest]
    atomic_write_through(manifest, TEMPLATE.encode("utf-8"))
    try:
        found = discover(folder)
    except (ConfigError, UnsafePathError):  # a broken manifest above: its commands say so
        found = None
    if found is not None and found.root != Path(os.path.abspath(folder)):
        return written, found.root
    if ignore_tree(folder / ".gitignore"):
        written.append(folder / ".gitignore")
    return written, None


def ignore_tree(gitignore: Path) -> bool:
    """Append `/.ontoskills/` to a `.gitignore` (created when missing) unless a line already
    ignores the tree; True when the file was written."""
    try:
        old = limits.read_regular_file(
            gitignore, limits.MAX_CONFIG_BYTES, what=".gitignore", error=ConfigError
        )
    except FileNotFoundError:
        old = b""
    lines = {ln.strip() for ln in old.decode("utf-8", "replace").splitlines()}
    if lines & {TREE_NAME, f"{TREE_NAME}/", f"/{TREE_NAME}", GITIGNORE_LINE}:
        return False
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    atomic_write_through(gitignore, old + sep + GITIGNORE_LINE.encode() + b"\n")
    return True


def _read(path: Path) -> tuple[bytes, tomlkit.TOMLDocument]:
    load_manifest(path)  # the same checks as every reader: a bad file is never edited
    data = limits.read_regular_file(
        path, limits.MAX_CONFIG_BYTES, what="project manifest", error=ConfigError
    )
    doc = tomlio.parse_document(
        data, source=str(path), error=ConfigError, max_bytes=limits.MAX_CONFIG_BYTES
    )
    return data, doc


def _dependencies(doc: tomlkit.TOMLDocument) -> Table:
    deps = doc.get("dependencies")
    if deps is None:
        deps = tomlkit.table()
        doc["dependencies"] = deps
    assert isinstance(deps, Table)  # load_manifest checked it is a table
    return deps


def add(
    path: Path,
    package_ids: list[str],
    *,
    skills: list[str],
    registry: str | None,
    declare: dict[str, str] | None = None,
) -> bytes:
    """Declare packages in the manifest (the named skills joining the declared ones; a
    whole package stays whole); the file's previous bytes. `declare`: the keys of
    `[registries.<registry>]` to write first, in the same write (a direct install's Agent
    Skills repository); a table of that name already there is left as it is (the caller
    checked it names the same location)."""
    data, doc = _read(path)
    if declare is not None and registry is not None:
        _declare_registry(doc, registry, declare)
    deps = _dependencies(doc)
    for pid in package_ids:
        entry: InlineTable = tomlkit.inline_table()
        old = deps.get(pid)
        if old is not None:
            entry.update(old)
        if skills and (old is None or "skills" in entry):
            entry["skills"] = sorted(set(entry.get("skills", [])) | set(skills))
        elif not skills:
            entry.pop("skills", None)
        if registry is not None:
            entry["registry"] = registry
        deps[pid] = entry
    write(path, tomlkit.dumps(doc).encode("utf-8"))
    return data


def _declare_registry(doc: tomlkit.TOMLDocument, name: str, keys: dict[str, str]) -> None:
    regs = doc.get("registries")
    if regs is None:
        regs = tomlkit.table(is_super_table=True)
        deps = doc.get("dependencies")
        if deps is not None:  # [dependencies] stays last: what a user appends lands there
            doc.remove("dependencies")
        doc["registries"] = regs
        if deps is not None:
            doc["dependencies"] = deps
    assert isinstance(regs, Table)  # load_manifest checked it is a table
    if name in regs:
        return
    table = tomlkit.table()
    for key, value in keys.items():
        table[key] = value
    regs[name] = table


def remove(path: Path, package_ids: list[str]) -> bytes:
    """Drop packages from the manifest's `[dependencies]`; the file's previous bytes.
    A package not declared in this manifest is exit 2 (it may be a member's)."""
    # once each: `remove a/b a/b` deleted a/b, then found it "not in [dependencies]" (exit 2);
    # the global remove acts once
    package_ids = list(dict.fromkeys(package_ids))
    data, doc = _read(path)
    deps = _dependencies(doc)
    missing = [p for p in package_ids if p not in deps]
    if missing:
        raise UsageError(
            f"{', '.join(missing)} not in the [dependencies] of {path}",
            hint="see `ontoskills list`; a workspace member's dependency is removed there",
        )
    for pid in package_ids:
        del deps[pid]
    _drop_repository_registries(doc, deps, set(package_ids))
    write(path, tomlkit.dumps(doc).encode("utf-8"))
    return data


def _drop_repository_registries(doc: tomlkit.TOMLDocument, deps: Table, gone: set[str]) -> None:
    """The `[registries.X]` of an Agent Skills repository whose one package was removed goes
    with it, as uv's `remove` drops a git dependency's `[tool.uv.sources]` entry; one still
    named by a dependency, or serving another package, stays."""
    regs = doc.get("registries")
    if not isinstance(regs, Table):
        return
    used = {e.get("registry") for e in deps.values() if isinstance(e, dict)}
    for name in list(regs):
        reg = regs[name]
        if (
            isinstance(reg, dict)
            and reg.get("kind") == "skills"
            and reg.get("package_id") in gone
            and name not in used
        ):
            del regs[name]
    if not regs:
        del doc["registries"]


def write(path: Path, data: bytes) -> None:
    atomic_write_through(path, data)


__all__ = ["LOCK_NAME", "add", "init", "remove", "write"]
