"""Fixtures for publishing tests: SKILL.md sources, packed packages, fresh registries."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from ontoskills.publish.gitops import Author
from ontoskills.publish.registry import init_registry
from ontoskills.publish.skillmd import convert

AUTHOR = Author("Publisher", "publisher@example.invalid")
GIT_ENV = {
    "GIT_AUTHOR_NAME": AUTHOR.name,
    "GIT_AUTHOR_EMAIL": AUTHOR.email,
}

SKILL_MD = """---
name: {name}
description: {description}
intents: [{intents}]
category: development
{extra}---
# {name}

Use this skill to {description_lower}.

## Steps

1. run `ontoskills {name}`
2. check the exit code

```sh
ontoskills {name} --json
```
"""


def write_skill_md(
    root: Path,
    name: str,
    *,
    description: str = "",
    intents: tuple[str, ...] = (),
    extra: str = "",
    folder: str | None = None,
) -> Path:
    desc = description or f"Do {name} things"
    path = root / (folder or name) / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        SKILL_MD.format(
            name=name,
            description=desc,
            description_lower=desc.lower(),
            intents=", ".join(intents or (f"do {name}",)),
            extra=extra,
        ),
        encoding="utf-8",
    )
    return path


def make_source(root: Path, package_id: str = "acme/tools", version: str = "1.0.0") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(
        json.dumps({"package_id": package_id, "version": version, "description": "Tools"}) + "\n"
    )
    write_skill_md(root, "lint", intents=("lint my code", "check style"))
    write_skill_md(root, "format", intents=("format my code",), extra="depends_on: [lint]\n")
    script = root / "lint" / "scripts" / "run.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_bytes(b"#!/bin/sh\necho lint\n")
    os.chmod(script, 0o755)
    return root


def make_package(
    tmp: Path, package_id: str = "acme/tools", version: str = "1.0.0", name: str | None = None
) -> Path:
    """A packed package folder (SKILL.md -> Turtle -> package.json with hashes)."""
    label = name or f"{package_id.replace('/', '-')}-{version}"
    src = make_source(tmp / "src" / label, package_id, version)
    out = tmp / "pkg" / label
    convert(src, out)
    return out


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    return dict(GIT_ENV)


@pytest.fixture
def folder_registry(tmp_path: Path) -> Path:
    path = tmp_path / "registry"
    init_registry(path, git=False)
    return path


@pytest.fixture
def git_registry(tmp_path: Path) -> Path:
    path = tmp_path / "git-registry"
    init_registry(path, git=True, author=AUTHOR)
    return path


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under root (including .git internals) -> content: 'nothing written'."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def refs(repo_path: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(repo_path))
    return {name: str(repo.references[name].resolve().target) for name in repo.references}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout
