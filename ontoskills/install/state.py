"""Compare the installed tree with the lockfile (used by install, update, doctor)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..fsutil import is_executable, sha256_file, walk_files
from ..lockfile import LockedPackage
from ..paths import Home


@dataclass
class Drift:
    modified: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    mode: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.modified or self.missing or self.extra or self.mode)

    @property
    def user_changes(self) -> list[str]:
        """Files whose content the user may have written and we must not silently clobber."""
        return sorted(self.modified + self.extra)

    def to_json(self) -> dict[str, object]:
        return {
            "modified": list(self.modified),
            "missing": list(self.missing),
            "extra": list(self.extra),
            "mode": list(self.mode),
            "clean": self.clean,
        }


def package_drift(home: Home, pkg: LockedPackage, *, fast: bool = False) -> Drift:
    """Re-hash every installed file against the lock (fast: sizes only)."""
    root = home.package_dir(pkg.id)
    drift = Drift()
    if not root.is_dir():
        drift.missing = [f.path for f in pkg.files]
        return drift
    locked = {f.path: f for f in pkg.files}
    on_disk = set(walk_files(root))
    for path, f in sorted(locked.items()):
        full = root.joinpath(*path.split("/"))
        if path not in on_disk:
            drift.missing.append(path)
            continue
        if fast:
            if full.stat().st_size != f.size:
                drift.modified.append(path)
        elif sha256_file(full)[0] != f.sha256:
            drift.modified.append(path)
            continue
        if is_executable(full) != f.executable:
            drift.mode.append(path)
    drift.extra = sorted(on_disk - set(locked))
    return drift


def installed_package_dirs(home: Home) -> list[str]:
    """author/pkg ids of every folder under ontologies/author/ (managed or not)."""
    out: list[str] = []
    if home.author_dir.is_dir():
        for author in sorted(home.author_dir.iterdir()):
            if author.is_dir():
                out.extend(
                    f"{author.name}/{p.name}" for p in sorted(author.iterdir()) if p.is_dir()
                )
    return out


def describe(drift: Drift, limit: int = 5) -> str:
    parts = []
    for label, items in (
        ("modified", drift.modified),
        ("missing", drift.missing),
        ("added", drift.extra),
        ("mode changed", drift.mode),
    ):
        if items:
            shown = ", ".join(items[:limit]) + (
                f" (+{len(items) - limit})" if len(items) > limit else ""
            )
            parts.append(f"{label}: {shown}")
    return "; ".join(parts)
