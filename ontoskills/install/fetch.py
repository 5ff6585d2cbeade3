"""Fetch + verify: build a package folder in staging, every file checked before it is used.

A file whose hash is known (lock, or the manifest's `files` array) is taken from the
content-addressed cache when present, else fetched; either way its sha256 must match, or the
whole install stops with IntegrityError (exit 4) before anything in the tree is touched.
Turtle modules must parse; hidden Unicode in them is a warning (an error with --strict).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyoxigraph

from .. import jsonio, limits
from ..errors import FormatError, IntegrityError, LimitExceededError, OntoskillsError
from ..fsutil import CHUNK, make_dirs, remove_file, set_executable
from ..lockfile import LockedFile
from ..paths import Cache
from ..safety import find_hidden_unicode, safe_join
from ..sources import Source
from .resolve import PackagePlan, PlannedFile


def _copy_verified(src: Path, dest: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(src, "rb") as fin, open(dest, "wb") as fout:
        while chunk := fin.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
            fout.write(chunk)
    return h.hexdigest(), size


def _store_blob(cache: Cache, sha: str, staged: Path) -> None:
    blob = cache.blob(sha)
    if blob.exists():
        return
    make_dirs(blob.parent)
    make_dirs(cache.tmp)
    tmp = cache.tmp / f"{sha}.{os.getpid()}.part"
    shutil.copyfile(staged, tmp)
    os.replace(tmp, blob)


def _changed(package_id: str, f: PlannedFile, what: str) -> IntegrityError:
    """A file whose bytes are not the ones recorded for it; the hint depends on who recorded
    them. The lock: the registry changed since (or was tampered with), and `update` accepts
    the new content. The manifest itself: the registry contradicts its own publish, and
    `update` would read the same manifest and fail the same way, so it is not the next step."""
    head = f"{package_id}: {f.path} {what}"
    if f.from_lock:
        return IntegrityError(
            f"{head} (tampered or changed upstream since it was locked)",
            hint="nothing was installed; if the change is legitimate run "
            "`ontoskills update` to accept the new content",
        )
    return IntegrityError(
        f"{head} in its manifest (the registry serves other bytes than it published)",
        hint="nothing was installed; the registry is inconsistent or tampered with: "
        "report it to its maintainers, or install from another registry",
    )


class PackageFetcher:
    def __init__(self, source: Source, cache: Cache, *, parallel: int, strict: bool) -> None:
        self.source = source
        self.cache = cache
        self.parallel = max(1, parallel)
        self.strict = strict
        self.warnings: list[str] = []

    def stage(self, plan: PackagePlan, dest_root: Path, advance=None) -> list[LockedFile]:  # type: ignore[no-untyped-def]
        """Fetch every planned file into dest_root; returns the verified file records."""

        def one(f: PlannedFile) -> LockedFile:
            rec = self._fetch_one(plan, f, dest_root)
            if advance is not None:
                advance()
            return rec

        # libgit2 repositories and local disks gain nothing from threads; HTTP does.
        workers = self.parallel if self.source.config.kind == "http" else 1
        if workers == 1:
            records = [one(f) for f in plan.files]
        else:
            pool = ThreadPoolExecutor(max_workers=workers)
            try:
                records = list(pool.map(one, plan.files))
            except KeyboardInterrupt:
                # Ctrl-C: drop queued files and stop in-flight downloads at their next chunk
                # instead of waiting for every one of them to finish.
                pool.shutdown(wait=False, cancel_futures=True)
                self.source.close()
                raise
            finally:
                pool.shutdown(wait=True)
        total = sum(r.size for r in records)
        if total > limits.MAX_PACKAGE_BYTES:
            raise LimitExceededError(f"{plan.package_id} is {total} bytes, over the package limit")
        for rec in records:
            if rec.path.endswith(".ttl"):
                self._check_turtle(plan.package_id, dest_root, rec.path)
            elif rec.path == "package.json" or rec.path.endswith("intents.json"):
                self._check_json_text(plan.package_id, dest_root, rec.path)
        return records

    def _fetch_one(self, plan: PackagePlan, f: PlannedFile, dest_root: Path) -> LockedFile:
        dest = safe_join(dest_root, f.path, f"file path in {plan.package_id}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        sha = size = None
        if f.sha256 and self.cache.blob(f.sha256).is_file():
            sha, size = _copy_verified(self.cache.blob(f.sha256), dest)
            if sha != f.sha256:  # a corrupted cache entry: drop it and fetch for real
                remove_file(self.cache.blob(f.sha256))
                sha = None
        if sha is None:
            relpath = f"{plan.package_root}/{f.path}" if plan.package_root else f.path
            limit = f.size if (f.sha256 and f.size is not None) else limits.MAX_FILE_BYTES
            try:
                sha, size = self.source.fetch_to(relpath, dest, max_bytes=limit)
            except LimitExceededError:
                if f.sha256:  # the registry serves more bytes than were published/locked
                    raise _changed(
                        plan.package_id, f, f"is larger than its recorded size {f.size}"
                    ) from None
                raise
            if f.sha256 and sha != f.sha256:
                raise _changed(
                    plan.package_id,
                    f,
                    f"has sha256 {sha[:12]}…, expected {f.sha256[:12]}…",
                )
            if not self.source.is_local:
                _store_blob(self.cache, sha, dest)
        assert size is not None
        set_executable(dest, f.executable)
        return LockedFile(f.path, sha, size, f.executable)

    def _check_turtle(self, package_id: str, root: Path, relpath: str) -> None:
        path = root.joinpath(*relpath.split("/"))
        data = path.read_bytes()
        # Turtle \uXXXX escapes can spell a bidi control the raw-byte scan cannot see; only
        # then do we pay for looking at every literal.
        escaped = b"\\u" in data or b"\\U" in data
        literals: list[str] = []
        try:
            for quad in pyoxigraph.parse(data, format=pyoxigraph.RdfFormat.TURTLE):
                if escaped and isinstance(quad.object, pyoxigraph.Literal):
                    literals.append(quad.object.value)
        except (SyntaxError, ValueError, OSError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise FormatError(f"{package_id}: {relpath} is not valid Turtle ({first})") from None
        text = data.decode("utf-8", "replace")
        self._report_hidden(package_id, relpath, text + "\n".join(literals))

    def _check_json_text(self, package_id: str, root: Path, relpath: str) -> None:
        """Intents and descriptions an agent reads: hidden Unicode, raw or \\u-escaped."""
        data = root.joinpath(*relpath.split("/")).read_bytes()
        text = data.decode("utf-8", "replace")
        if b"\\u" in data:
            # Malformed JSON is not ours to judge here: it is refused where it is used.
            with contextlib.suppress(OntoskillsError):
                text += json.dumps(jsonio.loads(data, source=relpath), ensure_ascii=False)
        self._report_hidden(package_id, relpath, text)

    def _report_hidden(self, package_id: str, relpath: str, text: str) -> None:
        hidden = find_hidden_unicode(text)
        if hidden:
            msg = (
                f"{package_id}: {relpath} contains invisible/bidi characters "
                f"({', '.join(sorted(set(hidden))[:5])}) that can hide instructions"
            )
            if self.strict:
                raise IntegrityError(msg, hint="inspect the file; drop --strict to accept it")
            self.warnings.append(msg)
