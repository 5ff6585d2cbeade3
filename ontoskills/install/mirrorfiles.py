"""The writing half of `mirror` (mirror.py): verified, incremental, owned writes into the
folder the user named, and which registry files a signed mirror must carry.

Every file goes through a `.ontoskills-part` sibling that the folder's ownership marker
lists before it is written, so what a killed run leaves is ours and the next run replaces
it; a file already there with the expected sha256 is neither downloaded nor rewritten.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .. import jsonio, limits
from ..errors import FormatError, IntegrityError, NotFoundError
from ..fsutil import check_path, make_dirs, remove_file, set_executable, sha256_bytes, sha256_file
from ..ownership import write_marker
from ..paths import Home, expand_user
from ..progress import Reporter
from ..safety import safe_join
from ..signing import MAX_ROOT_BYTES, MAX_SNAPSHOT_BYTES, METADATA_DIR, ROOT_PATH, versioned_root
from ..sources import BaseSource

PART = ".ontoskills-part"
MODEL_FILES = ("model.onnx", "tokenizer.json")
MAX_ROOT_VERSIONS = 1024  # a longer rotation chain than any registry should have


@dataclass(frozen=True)
class Wanted:
    path: str  # registry-relative
    sha256: str | None = None  # known: skip the download when the mirror already has it
    size: int | None = None
    executable: bool = False


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


class MirrorWriter:
    def __init__(self, folder: Path, listed: set[str], reporter: Reporter) -> None:
        self.folder = folder
        self.previous = {p for p in listed if not p.endswith(PART)}
        self.owned = set(listed)  # what the marker lists (grows before every write)
        self.written: set[str] = set()  # this run's files (copied or found identical)
        self.reporter = reporter
        self.copied = self.skipped = self.removed = self.bytes_copied = 0
        self._lock = threading.Lock()

    def _claim(self, paths: Iterable[str]) -> None:
        new = {q for p in paths for q in (p, p + PART)} - self.owned
        if new:
            self.owned |= new
            write_marker(self.folder, sorted(self.owned))

    def _dest(self, rel: str) -> Path:
        dest = safe_join(self.folder, rel, "mirror path")
        check_path(dest, leaf=False)
        make_dirs(dest.parent)
        return dest

    def _count(self, rel: str, copied: int | None) -> None:
        with self._lock:
            self.written.add(rel)
            if copied is None:
                self.skipped += 1
            else:
                self.copied += 1
                self.bytes_copied += copied
        self.reporter.advance()

    def put_all(
        self, src: BaseSource, wanted: list[Wanted], *, package_id: str, optional: bool = False
    ) -> dict[str, str]:
        """Each file verified into place (or kept); returns path -> sha256."""
        self._claim(w.path for w in wanted)
        parallel = src.options.parallel if src.parallel_fetch else 1
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(wanted) or 1))) as pool:
            results = list(pool.map(lambda w: self._put(src, w, package_id, optional), wanted))
        return {rel: sha for rel, sha in results if sha}

    def _put(self, src: BaseSource, w: Wanted, package_id: str, optional: bool) -> tuple[str, str]:
        dest = self._dest(w.path)
        if w.sha256 is not None and _regular(dest) and sha256_file(dest)[0] == w.sha256:
            set_executable(dest, w.executable)
            self._count(w.path, None)
            return w.path, w.sha256
        part = dest.with_name(dest.name + PART)
        try:
            sha, size = src.fetch_to(w.path, part, max_bytes=limits.MAX_FILE_BYTES)
        except NotFoundError:
            remove_file(part)
            if optional:
                return w.path, ""
            raise
        except BaseException:
            remove_file(part)
            raise
        if (w.sha256 is not None and sha != w.sha256) or (w.size is not None and size != w.size):
            remove_file(part)
            raise IntegrityError(
                f"{package_id}: {w.path} is not the expected file (sha256 {sha[:12]}…, "
                f"expected {(w.sha256 or '?')[:12]}…)",
                hint="nothing of it was written to the mirror; the registry changed or was "
                "tampered with since it was locked: run `ontoskills update`, then mirror again",
            )
        if _regular(dest) and sha256_file(dest)[0] == sha:
            remove_file(part)
            set_executable(dest, w.executable)
            self._count(w.path, None)
            return w.path, sha
        set_executable(part, w.executable)
        os.replace(part, dest)
        self._count(w.path, size)
        return w.path, sha

    def put_bytes(self, rel: str, data: bytes, *, counted: bool = True) -> None:
        self._claim([rel])
        dest = self._dest(rel)
        if _regular(dest) and sha256_file(dest)[0] == sha256_bytes(data):
            self._count(rel, None) if counted else self.written.add(rel)
            return
        part = dest.with_name(dest.name + PART)
        part.write_bytes(data)
        os.chmod(part, 0o644)
        os.replace(part, dest)
        self._count(rel, len(data)) if counted else self.written.add(rel)

    def put_local(self, rel: str, path: Path, sha: str) -> None:
        self._claim([rel])
        dest = self._dest(rel)
        if _regular(dest) and sha256_file(dest)[0] == sha:
            self._count(rel, None)
            return
        part = dest.with_name(dest.name + PART)
        shutil.copyfile(path, part)
        got, size = sha256_file(part)
        if got != sha:  # the source changed while we copied it
            remove_file(part)
            raise IntegrityError(f"{path} changed while it was copied", hint="run mirror again")
        os.replace(part, dest)
        self._count(rel, size)

    def finish(self, keep: set[str], extra: dict[str, bytes]) -> None:
        """Write the last files, remove what an earlier run wrote and nothing wants now,
        and leave a marker listing exactly the mirror's files."""
        for rel, data in extra.items():  # bookkeeping (mirror.json): not counted
            self.put_bytes(rel, data, counted=False)
        final = self.written | (keep & self.previous)
        for rel in sorted(self.owned - final):
            path = safe_join(self.folder, rel, "mirror path")
            if _regular(path):
                remove_file(path)
                if not rel.endswith(PART):
                    self.removed += 1
        write_marker(self.folder, sorted(final))


def metadata_files(source: BaseSource) -> list[str]:
    """Every metadata file a client may read: each root version (rotations are walked one
    by one), the newest root, timestamp, snapshot and the targets roles the snapshot names."""
    root = jsonio.loads(source.read(ROOT_PATH, max_bytes=MAX_ROOT_BYTES), source=ROOT_PATH)
    snapshot_rel = f"{METADATA_DIR}/snapshot.json"
    snap = jsonio.loads(
        source.read(snapshot_rel, max_bytes=MAX_SNAPSHOT_BYTES), source=snapshot_rel
    )
    try:
        version = root["signed"]["version"]
        roles = sorted(snap["signed"]["meta"])
    except (KeyError, TypeError):
        raise FormatError(f"{source.config.name}: malformed signed metadata") from None
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or not 0 < version <= MAX_ROOT_VERSIONS
    ):
        raise FormatError(f"{source.config.name}: {ROOT_PATH} has an unusable version")
    out = [versioned_root(v) for v in range(1, version + 1)]
    out += [ROOT_PATH, f"{METADATA_DIR}/timestamp.json", snapshot_rel]
    for role in roles:
        if not isinstance(role, str) or "/" in role or not role.endswith(".json"):
            raise FormatError(f"{snapshot_rel}: unusable role file name {str(role)[:40]!r}")
        out.append(f"{METADATA_DIR}/{role}")
    return out


def model_files(given: str | None, configured: str | None, home: Home) -> dict[str, Path] | None:
    """The encoder to carry: --model, else the configured path, else the home's."""
    for folder in (given, configured, home.embeddings_dir):
        if folder is None:
            continue
        base = expand_user(str(folder))
        found = {name: base / name for name in MODEL_FILES}
        if all(_regular(p) for p in found.values()):
            return found
        if folder is given:
            raise NotFoundError(
                f"--model {given}: no model.onnx + tokenizer.json there",
                hint="give the folder holding both files",
            )
    return None
