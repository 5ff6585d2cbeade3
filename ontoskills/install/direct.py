"""Direct installs of Agent Skills repositories (issue 25 item 2), as `npx skills add` users
type them: `install github:owner/repo[/skill][#ref]`, `install https://host/owner/repo(.git)
[#ref]`, or a local path. Each names an ad-hoc registry of kind `skills` (capped at
community, like any ad-hoc registry, unless it is a configured one) and the package
`owner/repo` (one skill with `/skill`); the lock records the registry's URL, so ci, update and
outdated read it again from there.

`github:` means https://github.com; ONTOSKILLS_GITHUB_URL points it elsewhere (a GitHub
Enterprise host, a mirror, the tests' loopback git server).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..config import ADHOC_TRUST, Config
from ..errors import UsageError
from ..paths import expand_user
from ..registries import (
    RegistryConfig,
    RegistryKind,
    is_skills_dir,
    skills_package_id,
    slug_for_url,
)
from ..safety import is_valid_name
from .session import Session

GITHUB_ENV = "ONTOSKILLS_GITHUB_URL"
GITHUB_URL = "https://github.com"
_PREFIXES = ("github:", "https://", "http://", "git+", "file://", "/", "./", "../", "~")
_REF = re.compile(r"[A-Za-z0-9._/+-]{1,200}")
HINT = (
    "use github:owner/repo[/skill][#ref], https://host/owner/repo(.git)[#ref], a local "
    "path, or author/package[/skill] from a configured registry"
)


@dataclass(frozen=True)
class DirectSpec:
    registry: RegistryConfig
    package_id: str
    skill: str | None

    @property
    def spec(self) -> str:
        """What the lock's `requested` records: author/package[/skill]."""
        return f"{self.package_id}/{self.skill}" if self.skill else self.package_id


def is_direct(spec: str) -> bool:
    return spec.startswith(_PREFIXES) or spec in (".", "..")


def github_base(env: dict[str, str] | None = None) -> str:
    base = ((env or os.environ).get(GITHUB_ENV) or GITHUB_URL).rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise UsageError(
            f"{GITHUB_ENV} must be an http(s) URL, got {base[:80]!r}",
            hint=f"unset it (github: then means {GITHUB_URL}) or set it to e.g. "
            "https://github.example.com",
        )
    return base


def parse_direct(session: Session, spec: str) -> DirectSpec:
    """The registry and package a direct spec names; exit 2 naming it when it is none."""
    return direct_spec(session.config, spec, session.options.env or None)


def direct_spec(config: Config, spec: str, env: dict[str, str] | None = None) -> DirectSpec:
    """`parse_direct` for a caller with no session yet (a project's `add` writes the spec's
    registry into ontoskills.toml before anything is resolved)."""
    skill = None
    if spec.startswith("github:"):
        rest, _, ref = spec[len("github:") :].partition("#")
        parts = rest.strip("/").split("/")
        if len(parts) not in (2, 3) or not all(p and _safe_segment(p) for p in parts):
            raise UsageError(f"invalid spec {spec[:120]!r}", hint=HINT)
        if ref and not _REF.fullmatch(ref):
            raise UsageError(f"invalid git ref in {spec[:120]!r}", hint=HINT)
        base = github_base(env)
        url = f"{base}/{parts[0]}/{parts[1]}" + (f"#{ref}" if ref else "")
        skill = parts[2].lower() if len(parts) == 3 else None
        kind = RegistryKind.SKILLS
    elif "://" in spec or spec.startswith("git+"):
        url, kind = spec, RegistryKind.SKILLS
    else:
        path = expand_user(spec).absolute()
        if not path.is_dir():
            raise UsageError(f"{spec[:120]} is not a folder", hint=HINT)
        url, kind = str(path), RegistryKind.SKILLS
        if not is_skills_dir(path):
            raise UsageError(
                f"{spec[:120]} holds no SKILL.md folder (or is a registry with an index.json)",
                hint="a registry is installed from with --registry PATH author/package",
            )
    reg = config.registry_at(url) or RegistryConfig(slug_for_url(url), url, kind, ADHOC_TRUST)
    pid = reg.package_id or skills_package_id(url)
    if pid is None:
        raise UsageError(
            f"cannot tell the package id of {spec[:120]}",
            hint="add it as a registry: `ontoskills registry add NAME LOCATION --kind skills "
            "--package-id AUTHOR/PKG`, then `ontoskills install AUTHOR/PKG`",
        )
    if skill is not None and not is_valid_name(skill):
        raise UsageError(f"invalid skill name in {spec[:120]!r}", hint=HINT)
    return DirectSpec(reg, pid, skill)


def _safe_segment(part: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", part) is not None and ".." not in part
