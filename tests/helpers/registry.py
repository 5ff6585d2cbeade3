"""Build synthetic registries in the exact OntoStore format, as folders or git repos.

Tests must not depend on ../shared; these builders make small, fully controlled registries
(including hostile ones: pass raw overrides to write whatever JSON a test needs).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

OC = "https://ontoskills.sh/ontology#"


@dataclass
class SkillSpec:
    id: str
    description: str = ""
    intents: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    depends: tuple[str, ...] = ()
    path: str | None = None  # default "<id>/ontoskill.ttl"
    category: str = "development"
    identifier: str | None = None  # dcterms:identifier when it differs from the id
    extra_modules: dict[str, str] = field(default_factory=dict)  # relpath -> sub-module ttl body
    default_enabled: bool = True
    vectors: bool = True  # write an intents.json next to the main module
    content_hash: str | None = None  # oc:contentHash (copies of one source share it)
    body: str = ""  # more Turtle for the main module (sections, knowledge...: richskill.py)

    @property
    def module(self) -> str:
        return self.path or f"{self.id}/ontoskill.ttl"


@dataclass
class PackageSpec:
    id: str
    skills: list[SkillSpec]
    version: str = "1.0.0"
    trust_tier: str | None = "official"  # what the INDEX says
    declared_tier: str | None = None  # what package.json claims
    assets: dict[str, tuple[bytes, bool]] = field(default_factory=dict)  # path -> (data, exec)
    files_array: bool = False  # write the `files` array with hashes (our publish format)
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    dimension: int = 8
    model: str = "sentence-transformers/all-MiniLM-L6-v2"


def iri_name(author: str, pkg: str, skill: str) -> str:
    raw = f"skill_{author}_{pkg}_{skill}"
    return "".join(c if c.isalnum() or c == "_" else "_" for c in raw)


def _lit(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def skill_turtle(package_id: str, s: SkillSpec) -> str:
    author, pkg = package_id.split("/")
    ident = s.identifier or s.id
    lines = [
        "@prefix dcterms: <http://purl.org/dc/terms/> .",
        f"@prefix oc: <{OC}> .",
        "",
        f"oc:{iri_name(author, pkg, s.id)} a oc:Skill ;",
        f"    dcterms:identifier {_lit(ident)} ;",
        f"    oc:hasName {_lit(s.id)} ;",
        f"    oc:hasCategory {_lit(s.category)} ;",
    ]
    if s.content_hash:
        lines.append(f"    oc:contentHash {_lit(s.content_hash)} ;")
    for alias in s.aliases:
        lines.append(f"    oc:hasAlias {_lit(alias)} ;")
    for dep in s.depends:
        lines.append(f"    oc:dependsOnSkill oc:skill_ontoskills_{dep.replace('-', '_')} ;")
    for intent in s.intents:
        lines.append(f"    oc:resolvesIntent {_lit(intent)} ;")
    lines.append(f"    oc:hasDescription {_lit(s.description or s.id)} .")
    return "\n".join(lines) + "\n" + s.body


def unit_vector(text: str, dimension: int) -> list[float]:
    """Deterministic pseudo-embedding; fine wherever real semantics are not under test."""
    raw = hashlib.sha256(text.encode()).digest() * (dimension // 32 + 1)
    vec = [(b - 127.5) / 127.5 for b in raw[:dimension]]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [round(v / norm, 6) for v in vec]


def intents_json(s: SkillSpec, spec: PackageSpec) -> dict[str, Any]:
    return {
        "model": spec.model,
        "dimension": spec.dimension,
        "intents": [
            {
                "intent": i,
                "embedding": unit_vector(i, spec.dimension),
                "skills": [s.identifier or s.id],
            }
            for i in s.intents
        ],
    }


def _write(path: Path, data: bytes, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, 0o755 if executable else 0o644)


def write_package(root: Path, spec: PackageSpec) -> dict[str, Any]:
    """Write packages/<author>/<pkg>/ under root; return the manifest dict written."""
    pkg_root = root / "packages" / spec.id
    modules: list[str] = []
    embedding_files: list[str] = []
    skills: list[dict[str, Any]] = []
    for s in spec.skills:
        _write(pkg_root / s.module, skill_turtle(spec.id, s).encode())
        modules.append(s.module)
        for rel, body in s.extra_modules.items():
            _write(pkg_root / rel, body.encode())
            modules.append(rel)
        folder = s.module.rsplit("/", 1)[0] if "/" in s.module else ""
        if s.vectors and s.intents:
            rel = f"{folder}/intents.json" if folder else "intents.json"
            _write(pkg_root / rel, (json.dumps(intents_json(s, spec)) + "\n").encode())
            embedding_files.append(rel)
        skills.append(
            {
                "id": s.id,
                "path": s.module,
                "default_enabled": s.default_enabled,
                "aliases": [],
                "description": s.description or s.id,
                "category": s.category,
                "intents": list(s.intents),
                "depends_on_skills": [f"ontoskills-{d}" for d in s.depends],
            }
        )
    for rel, (data, executable) in spec.assets.items():
        _write(pkg_root / rel, data, executable)
    manifest: dict[str, Any] = {
        "package_id": spec.id,
        "version": spec.version,
        "trust_tier": spec.declared_tier or spec.trust_tier or "community",
        "source_kind": "ontology",
        "modules": sorted(modules),
        "embedding_files": sorted(embedding_files),
        "skills": skills,
    }
    if spec.files_array:
        files = []
        for p in sorted(pkg_root.rglob("*")):
            if p.is_file() and p.name != "package.json":
                data = p.read_bytes()
                files.append(
                    {
                        "path": p.relative_to(pkg_root).as_posix(),
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "size": len(data),
                        "executable": bool(p.stat().st_mode & 0o100),
                    }
                )
        manifest["files"] = files
    manifest.update(spec.manifest_extra)
    _write(pkg_root / "package.json", (json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


def build_registry(
    root: Path, packages: list[PackageSpec], *, index_extra: list[dict[str, Any]] | None = None
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for spec in packages:
        write_package(root, spec)
        entry: dict[str, Any] = {
            "package_id": spec.id,
            "source_kind": "ontology",
            "manifest_path": f"packages/{spec.id}/package.json",
        }
        if spec.trust_tier is not None:
            entry["trust_tier"] = spec.trust_tier
        entries.append(entry)
    entries.extend(index_extra or [])
    _write(root / "index.json", (json.dumps({"packages": entries}, indent=2) + "\n").encode())
    return root


def commit_all(repo_path: Path, message: str = "update registry") -> str:
    """git add -A && git commit in repo_path (creating the repo if needed); returns the oid."""
    if (repo_path / ".git").exists():
        repo = pygit2.Repository(str(repo_path))
    else:
        repo = pygit2.init_repository(str(repo_path), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sig = pygit2.Signature("Test", "test@example.invalid", 1_700_000_000, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    oid = repo.create_commit("HEAD", sig, sig, message, tree, parents)
    return str(oid)


def sample_packages() -> list[PackageSpec]:
    """Two small packages with the real store's shapes: sub-modules, assets, exec bits, deps."""
    return [
        PackageSpec(
            id="acme/devtools",
            version="1.2.0",
            trust_tier="official",
            declared_tier="official",
            skills=[
                SkillSpec(
                    "debugging",
                    "Find the root cause of failing tests",
                    intents=("debug failing tests", "find root cause of a bug"),
                    depends=("planning",),
                    extra_modules={"debugging/deep-dive.ttl": f"@prefix oc: <{OC}> .\n"},
                ),
                SkillSpec(
                    "planning",
                    "Write an implementation plan",
                    intents=("write an implementation plan",),
                    depends=("debugging",),
                ),
                SkillSpec("reviewing", "Review code before merge", intents=("review code",)),
            ],
            assets={
                "debugging/scripts/run.sh": (b"#!/bin/sh\necho run\n", True),
                "debugging/notes.md": (b"# notes\r\nwindows line endings\r\n", False),
                "LICENSE": (b"MIT\n", False),
            },
        ),
        PackageSpec(
            id="acme/design",
            version="0.3.0",
            trust_tier="community",
            declared_tier="official",  # a package lying about its tier
            skills=[
                SkillSpec("colorize", "Add color to a dull UI", intents=("add color",)),
            ],
        ),
    ]
