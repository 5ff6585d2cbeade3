"""What a mutating verb reports: one `Change` per package it touched, in one `Report`.

The result type of install, ci, update, remove, enable/disable and a project's sync
(`install/mutation.py` fills it; the CLI prints its text or `to_json()`): a concept of its
own, kept out of the skeleton so that file stays the skeleton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..lockfile import LockedPackage


@dataclass
class Change:
    package_id: str
    action: str  # added | updated | installed | reinstalled | unchanged | removed | en/disabled
    version: str | None = None
    previous_version: str | None = None
    trust_tier: str | None = None
    files: int = 0
    skills: list[str] = field(default_factory=list)
    # Installed but not served (the package ships them opt-in, or the user disabled them),
    # and the command that serves them: search and the MCP tool do not see them until then.
    disabled: list[str] = field(default_factory=list)
    enable: str | None = None
    # Of `disabled`, those the package ships off (`default_enabled: false`, "opt-in"); the
    # others the user disabled (or a lock restored by `ci` says so): never called opt-in.
    opt_in: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        action: str,
        pkg: LockedPackage,
        previous: LockedPackage | None = None,
        opt_in: list[str] | None = None,
    ) -> Change:
        """A change that leaves `pkg` in the lock (what the CLI reports per package);
        `opt_in`: the skills its registry manifest ships off, when the command read it."""
        off = sorted(k for k, on in pkg.skills.items() if not on)
        whole = bool(off) and len(off) == len(pkg.skills)
        targets = [pkg.id] if whole else [f"{pkg.id}/{k}" for k in off]
        return cls(
            pkg.id,
            action,
            pkg.version,
            previous.version if previous else None,
            pkg.trust_tier,
            len(pkg.files),
            sorted(pkg.skills),
            off,
            "ontoskills enable " + " ".join(targets) if off else None,
            sorted(set(off) & set(opt_in or ())),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "package_id": self.package_id,
            "action": self.action,
            "version": self.version,
            "previous_version": self.previous_version,
            "trust_tier": self.trust_tier,
            "files": self.files,
            "skills": list(self.skills),
            "disabled": list(self.disabled),
            "enable": self.enable,
            "opt_in": list(self.opt_in),
        }


@dataclass
class Report:
    """What a mutating command did. Its warnings went through `session.reporter` as they
    happened (the CLI collects them into the command's result, docs/CLI.md)."""

    command: str
    lockfile: Path
    changes: list[Change] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    lock_changed: bool = False
    embeddings: bool = False  # the lock on disk afterwards has [embeddings] (not in the JSON)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "lockfile": str(self.lockfile),
            "lock_changed": self.lock_changed,
            "changes": [c.to_json() for c in self.changes],
            "recovered": list(self.recovered),
        }
