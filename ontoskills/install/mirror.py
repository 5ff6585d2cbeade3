"""`ontoskills mirror`: named packages (or a lock's) copied into a static registry folder that
installs with no network: from the folder itself or any static HTTP server serving it.

What a mirror holds (docs/SCALING.md "Air-gapped mirrors"):
- every file of each package as the source resolves it (a lock's exact files with
  --from-lock), each verified before it is written (the manifest's or lock's sha256; a
  signed registry's targets through its VerifiedSource);
- `index.json`: the mirrored packages only, when the source is unsigned. A signed registry's
  index.json is a signed target and no one but its maintainers can sign another, so the
  mirror keeps its signed bytes (every package listed; those not mirrored answer "not
  found") together with `metadata/` (every root version, timestamp, snapshot, targets, bins)
  so clients verify the mirror against the registry's own root. The metadata lists targets
  the mirror does not hold: TUF clients fetch only the targets they need.
- with --with-embeddings, the intents.json files, the registry's `embeddings/` files and an
  encoder (`model/model.onnx` + `model/tokenizer.json`: from --model, the configured path
  or the home's) for `install --with-embeddings --model MIRROR/model`.

The folder is one the user names: it must be new, empty or a mirror we wrote (its
`.ontoskills-output` marker lists every file in it, ownership.py); a re-run writes only what
changed (files whose signed or recorded sha256 already match are not even downloaded) and
removes only files it wrote earlier that no longer belong.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import filelock

from .. import envvars, jsonio, limits
from ..errors import BusyError, NotFoundError, UsageError
from ..fsutil import guard_root, make_dirs, sha256_file
from ..lockfile import Lockfile
from ..manifest import IndexEntry
from ..ownership import Keep, check_target, foreign_entry, listed_files
from ..registries import RegistryConfig
from ..sources import BaseSource, local_location
from ..sources.mirrorlist import MIRROR_STATE
from ..sources.sparse import CONFIG as SPARSE_CONFIG
from ..sources.sparse import MAX_ENTRY_BYTES, entry_path
from .mirrorfiles import MirrorWriter, Wanted, metadata_files, model_files
from .resolve import PackagePlan, plan_from_lock, resolve
from .session import Session

STATE = MIRROR_STATE  # what the mirror holds: packages, index entries, file hashes, listing
MIRROR_FORMAT = 1


@dataclass(frozen=True)
class MirroredPackage:
    id: str
    version: str
    files: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "files": self.files}


@dataclass(frozen=True)
class MirrorResult:
    """What `mirror` did (the verb's result: `--json` prints `to_json()`)."""

    to: str
    registry: str
    signed: bool
    packages: tuple[MirroredPackage, ...]
    copied: int  # files written (new or changed)
    skipped: int  # files already in the mirror with the right bytes: not rewritten
    removed: int  # files an earlier run wrote that no longer belong
    bytes_copied: int
    model: bool
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "mirror",
            "to": self.to,
            "registry": self.registry,
            "signed": self.signed,
            "packages": [p.to_json() for p in self.packages],
            "copied": self.copied,
            "skipped": self.skipped,
            "removed": self.removed,
            "bytes_copied": self.bytes_copied,
            "model": self.model,
            "notes": list(self.notes),
        }


@dataclass
class MirrorRequest:
    to: Path  # as the user named it
    packages: list[str] = field(default_factory=list)
    lock: Lockfile | None = None  # --from-lock: exactly the locked files
    with_embeddings: bool = False
    model_path: str | None = None
    keep: list[Keep] = field(default_factory=list)  # folders the target must stay clear of


def _source_keeps(reg: RegistryConfig) -> list[Keep]:
    path = local_location(reg)
    return [] if path is None else [Keep(f"the registry {reg.name}", path)]


def _plans(session: Session, req: MirrorRequest) -> list[tuple[PackagePlan, IndexEntry]]:
    out: list[tuple[PackagePlan, IndexEntry]] = []
    if req.lock is not None:
        for pid in sorted(req.lock.packages):
            pkg = req.lock.packages[pid]
            locked = req.lock.registries.get(pkg.registry)
            if locked is None:
                raise UsageError(f"the lock's {pid} names unknown registry {pkg.registry!r}")
            plan = plan_from_lock(session, pkg, locked)
            entry = session.snapshot(plan.registry).index.get(pid)
            if entry is None:
                raise NotFoundError(
                    f"{pid} (locked) is no longer in registry {plan.registry.name}",
                    hint="mirror from a registry that still has it, or update the lock",
                )
            out.append((plan, entry))
        return out
    for pid in dict.fromkeys(req.packages):
        plan = resolve(
            session, pid, skills=None, requested=[pid], with_embeddings=req.with_embeddings
        )
        entry = session.snapshot(plan.registry).index.get(pid)
        assert entry is not None  # resolve found it there
        out.append((plan, entry))
    return out


def _one_registry(plans: list[tuple[PackagePlan, IndexEntry]]) -> RegistryConfig:
    urls = sorted({p.registry.url for p, _ in plans})
    if len(urls) != 1:
        raise UsageError(
            f"a mirror copies one registry; these packages come from {len(urls)}: "
            + ", ".join(urls[:3]),
            hint="mirror each registry into its own folder (--registry NAME)",
        )
    return plans[0][0].registry


def _read_state(folder: Path) -> dict[str, Any]:
    """The previous run's record (ours: the marker lists it); anything unreadable: none."""
    try:
        raw = jsonio.loads_derived((folder / STATE).read_bytes())
    except (OSError, ValueError):
        return {}
    ok = isinstance(raw, dict) and raw.get("format") == MIRROR_FORMAT
    return raw if ok and isinstance(raw.get("packages"), dict) else {}


def _entry_json(entry: IndexEntry) -> dict[str, Any]:
    out = {
        "package_id": entry.package_id,
        "trust_tier": entry.trust_tier,
        "source_kind": entry.source_kind,
        "manifest_path": entry.manifest_path,
    }
    return out


def _open_target(req: MirrorRequest, reg: RegistryConfig) -> Path:
    real = check_target(
        req.to,
        [*req.keep, *_source_keeps(reg)],
        what="mirror folder",
        hint="mirror into a new folder of its own (--to DIR)",
    )
    if os.path.lexists(real) and (not real.is_dir() or real.is_symlink()):
        raise UsageError(f"mirror folder {req.to} is not a folder", hint="give a folder")
    if real.is_dir():
        entry = foreign_entry(real)
        if entry is not None:
            raise UsageError(
                f"mirror folder {req.to} holds {entry!r}, which ontoskills did not write",
                hint="mirror into a new or empty folder, or one an earlier `mirror` wrote",
            )
    make_dirs(real)
    guard_root(real)  # a symlinked folder planted inside it is refused (exit 4)
    return real


def mirror(session: Session, req: MirrorRequest) -> MirrorResult:
    if not req.packages and req.lock is None:
        raise UsageError(
            "name packages to mirror, or --from-lock LOCK",
            hint="e.g. `ontoskills mirror obra/superpowers --to ./mirror`",
        )
    plans = _plans(session, req)
    if not plans:
        raise UsageError("the lock lists no packages", hint="name packages to mirror instead")
    reg = _one_registry(plans)
    with _writer_lock(Path(os.path.realpath(os.path.expanduser(req.to)))):
        folder = _open_target(req, reg)  # checked under the lock: a running mirror's
        return _mirror_into(session, req, plans, reg, folder)  # temp files are not "foreign"


@contextlib.contextmanager
def _writer_lock(folder: Path) -> Iterator[None]:
    """One `mirror` per folder at a time; the lock file stays outside the mirror."""
    key = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"ontoskills-mirror-{key}.lock"
    try:
        with filelock.FileLock(str(path), timeout=envvars.get(envvars.LOCK_TIMEOUT)):
            yield
    except filelock.Timeout:
        raise BusyError(
            f"another `mirror` into {folder} is running",
            hint="wait for it, or raise ONTOSKILLS_LOCK_TIMEOUT",
        ) from None


def _mirror_into(
    session: Session,
    req: MirrorRequest,
    plans: list[tuple[PackagePlan, IndexEntry]],
    reg: RegistryConfig,
    folder: Path,
) -> MirrorResult:
    state = _read_state(folder)
    opened = session.opened(reg)
    signed = opened.root_keys is not None
    src = opened.source
    writer = MirrorWriter(folder, listed_files(folder) or set(), session.reporter)
    notes: list[str] = []
    packages: dict[str, dict[str, Any]] = dict(state.get("packages", {}))
    done: list[MirroredPackage] = []
    for plan, entry in plans:
        pkg_src = src if signed or plan.commit is None else session.source(reg, pin=plan.commit)
        root = plan.package_root
        wanted = [
            Wanted(f"{root}/{f.path}" if root else f.path, f.sha256, f.size, f.executable)
            for f in plan.files
        ]
        session.reporter.stage(f"mirroring {plan.package_id}", total=len(wanted))
        hashes = writer.put_all(pkg_src, wanted, package_id=plan.package_id)
        packages[plan.package_id] = {
            "entry": _entry_json(entry),
            "version": plan.version,
            "files": hashes,
            # the listing an HTTP client reads (sources/mirrorlist.py): static HTTP cannot
            # list folders, and a package.json without `files` names only its modules
            "sizes": {w.path: (folder / w.path).stat().st_size for w in wanted},
            "executable": sorted(w.path for w in wanted if w.executable),
        }
        done.append(MirroredPackage(plan.package_id, plan.version, len(wanted)))
    _write_index(session, src, writer, packages, signed, notes, reg)
    model = False
    if req.with_embeddings:
        model = _embeddings(session, src, writer, req, notes)
    keep = {p for rec in packages.values() for p in rec["files"]}
    state_bytes = _state_bytes(reg, signed, packages)
    writer.finish(keep, {STATE: state_bytes})
    return MirrorResult(
        to=str(folder),
        registry=reg.name,
        signed=signed,
        packages=tuple(done),
        copied=writer.copied,
        skipped=writer.skipped,
        removed=writer.removed,
        bytes_copied=writer.bytes_copied,
        model=model,
        notes=tuple(notes),
    )


def _state_bytes(reg: RegistryConfig, signed: bool, packages: dict[str, Any]) -> bytes:
    body = {
        "format": MIRROR_FORMAT,
        "registry": {"name": reg.name, "kind": str(reg.kind), "signed": signed},
        "packages": dict(sorted(packages.items())),
    }
    return (json.dumps(body, indent=2, sort_keys=True) + "\n").encode()


def _write_index(
    session: Session,
    src: BaseSource,
    writer: MirrorWriter,
    packages: dict[str, dict[str, Any]],
    signed: bool,
    notes: list[str],
    reg: RegistryConfig,
) -> None:
    if not signed:
        entries = [packages[p]["entry"] for p in sorted(packages)]
        data = (json.dumps({"packages": entries}, indent=2) + "\n").encode()
        writer.put_bytes("index.json", data)
        return
    # Signed: the index and metadata are the registry's own bytes, verified as read.
    inner: BaseSource = getattr(src, "inner", src)
    writer.put_all(src, [Wanted("index.json")], package_id="index")
    sparse = src.probe(SPARSE_CONFIG, max_bytes=MAX_ENTRY_BYTES)
    if sparse is not None:
        writer.put_bytes(SPARSE_CONFIG, sparse)
        for pid in sorted(packages):
            writer.put_all(src, [Wanted(entry_path(pid))], package_id=pid, optional=True)
    for rel in metadata_files(inner):
        writer.put_bytes(rel, inner.read(rel, max_bytes=limits.MAX_FILE_BYTES))
    total = len(session.snapshot(reg).index)
    if total > len(packages):
        notes.append(
            f"{reg.name} is signed: the mirror keeps its signed index.json, which lists all "
            f"{total} packages; the {total - len(packages)} not mirrored answer 'not found'"
        )


def _embeddings(
    session: Session, src: BaseSource, writer: MirrorWriter, req: MirrorRequest, notes: list[str]
) -> bool:
    for name in ("tokenizer.json", "model.onnx"):  # the registry's own, when it has them
        rel = f"embeddings/{name}"
        if src.probe(rel, max_bytes=limits.MAX_FILE_BYTES) is not None:
            writer.put_all(src, [Wanted(rel)], package_id="embeddings")
    found = model_files(req.model_path, session.config.embeddings.path, session.home)
    if found is None:
        notes.append(
            "no encoder copied: pass --model DIR (model.onnx + tokenizer.json) or install "
            "one first (`ontoskills install --with-embeddings`)"
        )
        return False
    for name, path in found.items():
        sha, _ = sha256_file(path)
        writer.put_local(f"model/{name}", path, sha)
    return True
