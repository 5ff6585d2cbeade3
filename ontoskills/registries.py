"""Where packages come from: a registry's configuration and how its location is read.

Its own module (not config.py, not sources/) because both need it: config.py parses
`[registries.*]` into `RegistryConfig`, and every source is opened from one. Before, config
imported `sources.detect_kind` and sources imported `config.RegistryConfig`: the only import
cycle between packages (tests/test_architecture.py keeps it gone).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .choices import Choice
from .errors import ConfigError, OntoskillsError
from .paths import expand_user
from .redact import redact_url, url_secret
from .safety import is_valid_name, split_package_id


class RegistryKind(Choice):
    HTTP = "http"
    FOLDER = "folder"
    GIT = "git"
    SKILLS = "skills"  # an Agent Skills repository (git or folder) read as one package
    OCI = "oci"  # oci://host/namespace: an OCI distribution registry (sources/oci.py)


@dataclass(frozen=True)
class RegistryConfig:
    name: str
    url: str
    kind: RegistryKind  # a plain string is read as one (unknown: ConfigError, exit 2)
    trust: str | None = None  # a Tier value: the cap on tiers read from this registry
    root: str | None = None  # trusted TUF root.json (signed registries, docs/SECURITY.md)
    package_id: str | None = None  # kind skills: the one package's id, when not in the URL

    def __post_init__(self) -> None:
        kind = RegistryKind.get(self.kind)
        if kind is None:
            raise ConfigError(
                f"registry {self.name}: unknown kind {str(self.kind)[:40]!r}",
                hint=f"use one of {RegistryKind.listed()}",
            )
        object.__setattr__(self, "kind", kind)
        if self.package_id is not None:
            if kind != RegistryKind.SKILLS:  # only a repository of skills is one package
                raise ConfigError(
                    f"registry {self.name}: a package id is only for kind skills "
                    "(an Agent Skills repository)",
                    hint='drop package_id, or set kind = "skills"',
                )
            try:
                split_package_id(self.package_id, "package id")
            except OntoskillsError as exc:
                raise ConfigError(f"registry {self.name}: {exc.message}") from None
        # Credentials in a URL (userinfo, `?token=`, a presigned signature) would end up in
        # the lockfile, config.toml, the SBOM and messages: every registry is built here
        # (registry add, config.toml, --registry, ONTOSKILLS_REGISTRY, a lock), so one refusal
        # keeps them out of everything persisted; what is shown goes through redact_url.
        secret = url_secret(self.url)
        if secret is not None:
            raise ConfigError(
                f"registry {self.name}: the URL contains credentials ({secret})",
                hint="remove them from the URL and set ONTOSKILLS_TOKEN (or GITHUB_TOKEN) instead",
            )

    def to_json(self) -> dict[str, Any]:
        """`registry add/list --json` (a public shape: keys written out)."""
        return {
            "name": self.name,
            "url": redact_url(self.url),  # clean by construction; shown redacted regardless
            "kind": str(self.kind),
            "trust": None if self.trust is None else str(self.trust),
            "root": self.root,  # the pinned TUF root (signed registries), else null
            "package_id": self.package_id,  # kind skills: given with --package-id, else null
        }

    def to_toml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url, "kind": str(self.kind)}
        if self.trust:
            out["trust"] = str(self.trust)
        if self.root:
            out["root"] = self.root
        if self.package_id:
            out["package_id"] = self.package_id
        return out


def same_location(a: str, b: str) -> bool:
    """Whether two registry URLs or paths name the same registry (paths: after symlinks)."""
    if "://" not in a and "@" not in a and "://" not in b and "@" not in b:
        return os.path.realpath(os.path.expanduser(a)) == os.path.realpath(os.path.expanduser(b))
    return a.rstrip("/") == b.rstrip("/")


_GIT_HOSTS = {"github.com", "gitlab.com", "codeberg.org", "bitbucket.org"}
_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")


def _is_git_dir(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def is_skills_dir(path: Path) -> bool:
    """An Agent Skills repository: no index.json, and a SKILL.md where the layouts put one
    (the root, skills/*, plugins/*/skills/*, .claude/skills/*, or any folder two deep)."""
    if (path / "index.json").exists() or not path.is_dir():
        return False
    patterns = (
        "SKILL.md",
        "*/SKILL.md",
        "*/*/SKILL.md",
        "*/*/*/SKILL.md",
        ".claude/skills/*/SKILL.md",
    )
    return any(next(path.glob(p), None) is not None for p in patterns)


def skills_package_id(url: str) -> str | None:
    """The package id of an Agent Skills repository from its location: `<owner>/<repo>` of a
    URL or path's last two segments (`.git` dropped, lower-cased), or None when they are not
    valid names (then `registry add --package-id A/P` gives it)."""
    bare = url.split("#", 1)[0].rstrip("/")
    bare = bare[4:] if bare.startswith("git+") else bare
    bare = bare[len("file://") :] if bare.startswith("file://") else bare
    path = urlsplit(bare).path if "://" in bare else _SCP_RE.sub("", bare)
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2:
        return None
    owner, repo = segments[-2].lower(), segments[-1].lower().removesuffix(".git")
    return f"{owner}/{repo}" if is_valid_name(owner) and is_valid_name(repo) else None


def detect_kind(url: str) -> RegistryKind:
    """Guess the source kind from a URL or path; `registry add --kind` overrides it. A local
    folder or git repository with SKILL.md files and no index.json is kind `skills`; a
    remote one cannot be looked into first: `--kind skills` (or `install github:...`)."""
    if url.startswith("oci://"):
        return RegistryKind.OCI
    if url.startswith("git+") or _SCP_RE.match(url) or url.startswith(("ssh://", "git://")):
        return RegistryKind.GIT
    bare = url.split("#", 1)[0].rstrip("/")
    if bare.endswith(".git"):
        return RegistryKind.GIT
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        segments = [s for s in parts.path.split("/") if s]
        if parts.hostname in _GIT_HOSTS and len(segments) == 2:
            return RegistryKind.GIT
        return RegistryKind.HTTP
    local = expand_user(url[len("file://") :] if url.startswith("file://") else url)
    if is_skills_dir(local):
        return RegistryKind.SKILLS
    return RegistryKind.GIT if _is_git_dir(local) else RegistryKind.FOLDER


def slug_for_url(url: str) -> str:
    """A short registry name for one-off --registry use: repo or folder name, else host."""
    bare = url.split("#", 1)[0].rstrip("/")
    parts = urlsplit(bare[4:] if bare.startswith("git+") else bare)
    segments = (parts.path if parts.scheme else bare).rstrip("/").split("/")
    if segments[-1] == "index.json":
        segments.pop()
    tail = segments[-1].rsplit(":", 1)[-1] if segments else ""
    if tail.endswith(".git"):
        tail = tail[:-4]
    if not tail and parts.hostname:
        tail = parts.hostname
    slug = re.sub(r"[^a-z0-9._-]+", "-", tail.lower()).strip("-._")
    return slug[:64] or "registry"
