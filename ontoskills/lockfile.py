"""`ontoskills.lock`: the canonical record of what is installed (format: docs/LOCKFILE.md).

Canonical means: keys sorted, files sorted by path, LF line endings, no timestamps and no
absolute paths (local registry paths are stored relative to the lockfile's folder). The
same inputs give the same bytes on any machine, so a committed lock diffs cleanly.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from . import limits, tomlio
from .errors import LockFormatError, LockMissingError, UnsafePathError
from .fsutil import atomic_write_through
from .manifest import SHA256_RE, Tier
from .redact import redact_url
from .registries import RegistryKind
from .safety import check_relpath, is_valid_name, split_package_id
from .tables import Table

LOCK_VERSION = 1
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7})(\s|$)", re.MULTILINE)


@dataclass(frozen=True)
class LockedFile:
    path: str
    sha256: str
    size: int
    executable: bool = False

    @classmethod
    def from_toml(cls, t: Table) -> LockedFile:
        sha = t.required("sha256", str)
        if not SHA256_RE.match(sha):
            t.fail(f"is not a sha256: {sha[:80]!r}", "sha256")
        path = check_relpath(t.required("path", str), f"file path in {t.source}")
        size = t.required("size", int)
        return cls(path, sha, size, t.get("executable", bool, False) or False)

    def to_toml(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "size": self.size,
            "executable": self.executable,
        }


def _files(t: Table) -> list[LockedFile]:
    return [LockedFile.from_toml(f) for f in t.tables_of("files")]


@dataclass(frozen=True)
class LockedRegistry:
    name: str
    kind: RegistryKind
    url: str
    commit: str | None = None
    index_sha256: str | None = None
    # Signed registries (docs/SECURITY.md): verified through TUF at lock time, and the key
    # ids of the root it chained to; `ci` refuses a registry whose root no longer chains to them.
    signed: bool = False
    root_keys: tuple[str, ...] = ()

    @classmethod
    def from_toml(cls, name: str, t: Table, lock_dir: Path) -> LockedRegistry:
        if not is_valid_name(name):
            t.fail("is not a valid registry name")
        url = t.required("url", str)
        if "\x00" in url:  # no path or URL holds NUL; os calls raise on it
            t.fail("holds a NUL character", "url")
        kind = t.choice("kind", RegistryKind)
        if kind is None:
            t.fail(f"is missing (one of {RegistryKind.listed()})", "kind")
        keys = t.list_of("root_keys", str)
        if not all(SHA256_RE.match(k) for k in keys):
            t.fail("must be sha256 key ids", "root_keys")
        signed = t.get("signed", bool, False) or False
        if signed and not keys:
            t.fail("is signed, so it needs its root_keys")
        return cls(
            name=name,
            kind=kind,
            url=_absolute_url(url, lock_dir),
            commit=t.get("commit", str),
            index_sha256=t.get("index_sha256", str),
            signed=signed,
            root_keys=tuple(sorted(keys)),
        )

    def to_toml(self, lock_dir: Path) -> dict[str, Any]:
        # No credential is ever written back (a hand-edited one included): a registry
        # URL carrying one is refused where it is used (registries.RegistryConfig).
        entry: dict[str, Any] = {
            "kind": self.kind,
            "url": redact_url(_portable_url(self.url, lock_dir)),
        }
        if self.commit:
            entry["commit"] = self.commit
        if self.index_sha256:
            entry["index_sha256"] = self.index_sha256
        if self.signed:
            entry["signed"] = True
            entry["root_keys"] = sorted(self.root_keys)
        return entry


@dataclass
class LockedPackage:
    id: str
    version: str
    registry: str
    trust_tier: str
    requested: list[str]
    files: list[LockedFile]
    skills: dict[str, bool]
    with_embeddings: bool = False
    root: str = ""  # registry-relative folder the files come from
    commit: str | None = None  # git registries: the commit the files were read at

    @property
    def integrity(self) -> str:
        return package_integrity(self.files)

    def file(self, path: str) -> LockedFile | None:
        return next((f for f in self.files if f.path == path), None)

    @classmethod
    def from_toml(cls, pid: str, t: Table) -> LockedPackage:
        split_package_id(pid, f"package id in {t.source}")
        tier = t.choice("trust_tier", Tier)
        if tier is None:
            t.fail("is missing", "trust_tier")
        root = t.get("root", str, f"packages/{pid}") or f"packages/{pid}"
        pkg = cls(
            id=pid,
            version=t.get("version", str, "") or "",
            registry=t.get("registry", str, "") or "",
            trust_tier=tier.value,
            requested=t.list_of("requested", str, [pid]),
            files=_files(t),
            skills=t.map_of("skills", bool),
            with_embeddings=t.get("with_embeddings", bool, False) or False,
            root=check_relpath(root, f"root in {t.source}"),
            commit=t.get("commit", str) or None,
        )
        recorded = t.get("integrity", str)
        if recorded is not None and recorded != pkg.integrity:
            t.fail("does not match its file list (edited by hand?)", "integrity")
        return pkg

    def to_toml(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "registry": self.registry,
            "trust_tier": self.trust_tier,
            "requested": sorted(set(self.requested)),
            "root": self.root or f"packages/{self.id}",
            "with_embeddings": self.with_embeddings,
            "integrity": self.integrity,
            **({"commit": self.commit} if self.commit else {}),
            "skills": {k: self.skills[k] for k in sorted(self.skills)},
            "files": [f.to_toml() for f in sorted(self.files, key=lambda f: f.path)],
        }


@dataclass
class LockedModel:
    """The sentence encoder used for semantic search (see embeddings/)."""

    model: str
    revision: str
    dimension: int
    source: str
    files: list[LockedFile]

    @classmethod
    def from_toml(cls, t: Table) -> LockedModel:
        return cls(
            model=t.get("model", str, "") or "",
            revision=t.get("revision", str, "") or "",
            dimension=t.required("dimension", int),
            source=t.get("source", str, "") or "",
            files=_files(t),
        )

    def to_toml(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "revision": self.revision,
            "dimension": self.dimension,
            "source": self.source,
            "files": [f.to_toml() for f in sorted(self.files, key=lambda f: f.path)],
        }


@dataclass
class Lockfile:
    registries: dict[str, LockedRegistry] = field(default_factory=dict)
    packages: dict[str, LockedPackage] = field(default_factory=dict)
    embeddings: LockedModel | None = None

    def to_bytes(self, lock_dir: Path) -> bytes:
        return dump(self, lock_dir)

    def digest(self, lock_dir: Path) -> str:
        return hashlib.sha256(self.to_bytes(lock_dir)).hexdigest()


def package_integrity(files: list[LockedFile]) -> str:
    """One digest over a package's file list: identity comes from content, not `version`."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path):
        h.update(f"{f.path}\0{f.sha256}\0{f.size}\0{int(f.executable)}\n".encode())
    return "sha256-" + h.hexdigest()


def is_local_url(url: str) -> bool:
    return "://" not in url and not re.match(r"^[\w.-]+@[\w.-]+:", url)


def _portable_url(url: str, lock_dir: Path) -> str:
    if not is_local_url(url):
        return url
    return Path(os.path.relpath(Path(url).absolute(), lock_dir)).as_posix()


def _absolute_url(url: str, lock_dir: Path) -> str:
    if not is_local_url(url) or Path(url).is_absolute():
        return url
    return str((lock_dir / url).resolve())


def dump(lock: Lockfile, lock_dir: Path) -> bytes:
    data: dict[str, Any] = {"lock_version": LOCK_VERSION}
    if lock.registries:
        data["registries"] = {
            name: lock.registries[name].to_toml(lock_dir) for name in sorted(lock.registries)
        }
    if lock.embeddings:
        data["embeddings"] = lock.embeddings.to_toml()
    if lock.packages:
        data["packages"] = {pid: lock.packages[pid].to_toml() for pid in sorted(lock.packages)}
    text = "# Generated by ontoskills. Commit it; do not edit by hand.\n" + tomli_w.dumps(data)
    return text.encode("utf-8")


def write(lock: Lockfile, path: Path) -> None:
    """Atomic; a symlinked lockfile stays a link and its target is replaced (the user's file).
    Installs write the lock inside their transaction (install/transaction.py), the same way."""
    atomic_write_through(path, dump(lock, path.parent))


_HINT = "restore it from version control, or delete it and run `ontoskills install` again"


def _err(path: Path, msg: str) -> LockFormatError:
    return LockFormatError(f"{path}: {msg}", hint=_HINT)


def parse(text: str, path: Path) -> Lockfile:
    """A validated Lockfile; every problem, unsafe paths and names included, is a
    LockFormatError (exit 3, docs/LOCKFILE.md): the lock is the user's file, not a registry's."""
    try:
        return _parse(text, path)
    except UnsafePathError as exc:  # its message names the file already: say it once
        raise _err(path, exc.message.replace(f" in {path}", "")) from None


def _parse(text: str, path: Path) -> Lockfile:
    if _CONFLICT_RE.search(text):
        raise LockFormatError(
            f"{path}: contains merge-conflict markers",
            hint="resolve the conflict (or check out one side) and run `ontoskills install`",
        )
    # Bounded (size, nesting, every string: a 64 KB URL cost `lock export` 35 s) before any
    # validator below sees a value; every parser failure is exit 3.
    data = tomlio.loads(
        text,
        source=str(path),
        error=LockFormatError,
        max_bytes=limits.MAX_LOCKFILE_BYTES,
        max_string=limits.MAX_LOCK_STRING,
        hint=_HINT,
    )
    top = Table(data, str(path), LockFormatError, hint=_HINT)
    version = data.get("lock_version")
    if version != LOCK_VERSION:
        raise LockFormatError(
            f"{path}: unsupported lock_version {version!r} (this ontoskills reads {LOCK_VERSION})",
            hint="upgrade ontoskills, or regenerate the lock with `ontoskills install`",
        )
    lock = Lockfile()
    for name, t in top.tables("registries"):
        lock.registries[name] = LockedRegistry.from_toml(name, t, path.parent)
    emb = top.table("embeddings")
    if emb is not None:
        lock.embeddings = LockedModel.from_toml(emb)
    for pid, t in top.tables("packages"):
        lock.packages[pid] = LockedPackage.from_toml(pid, t)
    return lock


def read_lock_bytes(path: Path) -> bytes | None:
    """The lockfile's bytes, None when there is none. A FIFO, a device (`/dev/zero`), a
    folder or a file over the size limit is a LockFormatError (exit 3), never a hang."""
    try:
        return limits.read_regular_file(
            path, limits.MAX_LOCKFILE_BYTES, what="lockfile", error=LockFormatError
        )
    except FileNotFoundError:
        return None


def load(path: Path, *, required: bool = False) -> Lockfile:
    return from_bytes(read_lock_bytes(path), path, required=required)


def from_bytes(data: bytes | None, path: Path, *, required: bool = False) -> Lockfile:
    """The lock `data` (read from `path`; None: there is none) parsed: for a caller that also
    needs the bytes (their sha256), so the file is read once."""
    if data is None:
        if required:
            raise LockMissingError(
                f"no lockfile at {path}",
                hint="run `ontoskills install <package>` to create one, or pass --lockfile",
            )
        return Lockfile()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _err(path, "not valid UTF-8") from None
    return parse(text, path)
