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

LOCK_VERSION = 1
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7})(\s|$)", re.MULTILINE)


@dataclass(frozen=True)
class LockedFile:
    path: str
    sha256: str
    size: int
    executable: bool = False

    def to_toml(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "size": self.size,
            "executable": self.executable,
        }


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


@dataclass
class LockedModel:
    """The sentence encoder used for semantic search (see embeddings/)."""

    model: str
    revision: str
    dimension: int
    source: str
    files: list[LockedFile]


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
        regs = {}
        for name in sorted(lock.registries):
            r = lock.registries[name]
            # No credential is ever written back (a hand-edited one included): a registry
            # URL carrying one is refused where it is used (registries.RegistryConfig).
            url = redact_url(_portable_url(r.url, lock_dir))
            entry: dict[str, Any] = {"kind": r.kind, "url": url}
            if r.commit:
                entry["commit"] = r.commit
            if r.index_sha256:
                entry["index_sha256"] = r.index_sha256
            if r.signed:
                entry["signed"] = True
                entry["root_keys"] = sorted(r.root_keys)
            regs[name] = entry
        data["registries"] = regs
    if lock.embeddings:
        m = lock.embeddings
        data["embeddings"] = {
            "model": m.model,
            "revision": m.revision,
            "dimension": m.dimension,
            "source": m.source,
            "files": [f.to_toml() for f in sorted(m.files, key=lambda f: f.path)],
        }
    if lock.packages:
        pkgs = {}
        for pid in sorted(lock.packages):
            p = lock.packages[pid]
            pkgs[pid] = {
                "version": p.version,
                "registry": p.registry,
                "trust_tier": p.trust_tier,
                "requested": sorted(set(p.requested)),
                "root": p.root or f"packages/{pid}",
                "with_embeddings": p.with_embeddings,
                "integrity": p.integrity,
                **({"commit": p.commit} if p.commit else {}),
                "skills": {k: p.skills[k] for k in sorted(p.skills)},
                "files": [f.to_toml() for f in sorted(p.files, key=lambda f: f.path)],
            }
        data["packages"] = pkgs
    text = "# Generated by ontoskills. Commit it; do not edit by hand.\n" + tomli_w.dumps(data)
    return text.encode("utf-8")


def write(lock: Lockfile, path: Path) -> None:
    """Atomic; a symlinked lockfile stays a link and its target is replaced (the user's file).
    Installs write the lock inside their transaction (install/transaction.py), the same way."""
    atomic_write_through(path, dump(lock, path.parent))


_HINT = "restore it from version control, or delete it and run `ontoskills install` again"


def _err(path: Path, msg: str) -> LockFormatError:
    return LockFormatError(f"{path}: {msg}", hint=_HINT)


def _files(raw: object, path: Path, where: str) -> list[LockedFile]:
    if not isinstance(raw, list):
        raise _err(path, f"{where}.files must be an array")
    out = []
    for item in raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("sha256"), str)
            and SHA256_RE.match(item["sha256"])
            and isinstance(item.get("size"), int)
            and isinstance(item.get("executable", False), bool)
        ):
            raise _err(path, f"{where}.files has an invalid entry {item!r:.120}")
        check_relpath(item["path"], f"file path in {path}")
        out.append(LockedFile(item["path"], item["sha256"], item["size"], item["executable"]))
    return out


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
    version = data.get("lock_version")
    if version != LOCK_VERSION:
        raise LockFormatError(
            f"{path}: unsupported lock_version {version!r} (this ontoskills reads {LOCK_VERSION})",
            hint="upgrade ontoskills, or regenerate the lock with `ontoskills install`",
        )
    lock = Lockfile()
    lock_dir = path.parent
    for name, r in (data.get("registries") or {}).items():
        if not (
            isinstance(r, dict)
            and isinstance(r.get("url"), str)
            and "\x00" not in r["url"]  # no path or URL holds NUL; os calls raise on it
            and is_valid_name(name)
        ):
            raise _err(path, f"invalid registry entry {name!r}")
        signed = r.get("signed", False)
        keys = r.get("root_keys", [])
        if not isinstance(signed, bool) or not (
            isinstance(keys, list) and all(isinstance(k, str) and SHA256_RE.match(k) for k in keys)
        ):
            raise _err(path, f"registries.{name}: signed/root_keys are malformed")
        if signed and not keys:
            raise _err(path, f"registries.{name}: a signed registry needs its root_keys")
        if any(not isinstance(r.get(k, ""), str) for k in ("commit", "index_sha256")):
            raise _err(path, f"registries.{name}: commit and index_sha256 must be strings")
        kind = RegistryKind.get(r.get("kind"))
        if kind is None:
            raise _err(
                path,
                f"registries.{name}: unknown kind {str(r.get('kind'))[:40]!r} "
                f"(one of {RegistryKind.listed()})",
            )
        lock.registries[name] = LockedRegistry(
            name=name,
            kind=kind,
            url=_absolute_url(r["url"], lock_dir),
            commit=r.get("commit"),
            index_sha256=r.get("index_sha256"),
            signed=signed,
            root_keys=tuple(sorted(keys)),
        )
    emb = data.get("embeddings")
    if emb is not None:
        if not isinstance(emb, dict) or not isinstance(emb.get("dimension"), int):
            raise _err(path, "invalid [embeddings] table")
        lock.embeddings = LockedModel(
            model=str(emb.get("model", "")),
            revision=str(emb.get("revision", "")),
            dimension=emb["dimension"],
            source=str(emb.get("source", "")),
            files=_files(emb.get("files", []), path, "embeddings"),
        )
    for pid, p in (data.get("packages") or {}).items():
        split_package_id(pid, f"package id in {path}")
        where = f"packages.{pid}"
        if not isinstance(p, dict):
            raise _err(path, f"{where} must be a table")
        tier = Tier.get(p.get("trust_tier"))
        if tier is None:
            raise _err(path, f"{where}.trust_tier {p.get('trust_tier')!r} is not a known tier")
        requested = p.get("requested", [pid])
        if not isinstance(requested, list):
            raise _err(path, f"{where}.requested must be an array of specs")
        skills = p.get("skills", {})
        if not isinstance(skills, dict) or not all(isinstance(v, bool) for v in skills.values()):
            raise _err(path, f"{where}.skills must map skill ids to true/false")
        pkg = LockedPackage(
            id=pid,
            version=str(p.get("version", "")),
            registry=str(p.get("registry", "")),
            trust_tier=tier.value,
            requested=[str(s) for s in requested],
            files=_files(p.get("files", []), path, where),
            skills=dict(skills),
            with_embeddings=bool(p.get("with_embeddings", False)),
            root=check_relpath(str(p.get("root", f"packages/{pid}")), f"root in {path}"),
            commit=str(p["commit"]) if p.get("commit") else None,
        )
        recorded = p.get("integrity")
        if recorded is not None and recorded != pkg.integrity:
            raise _err(path, f"{where}.integrity does not match its file list (edited by hand?)")
        lock.packages[pid] = pkg
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
