"""Fetch + verify: build a package folder in staging, every file checked before it is used.

A file whose hash is known (lock, or the manifest's `files` array) is taken from the
content-addressed cache when present, else fetched; either way its sha256 must match, or the
whole install stops with IntegrityError (exit 4) before anything in the tree is touched.
Turtle modules must parse; hidden Unicode in them is a warning (an error with --strict).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import jsonio, limits
from ..errors import (
    FormatError,
    IntegrityError,
    LimitExceededError,
    OntoskillsError,
    UnsafePathError,
)
from ..fsutil import set_executable
from ..intents import parse_intents
from ..lockfile import LockedFile
from ..paths import Cache
from ..safety import find_hidden_unicode, find_path_collision, safe_join
from ..skillheader import check_turtle, parse_turtle, readable_text
from ..sources import BaseSource
from .resolve import PackagePlan, PlannedFile

# OS errors a registry causes through the names it chooses (too long, a file where a folder
# must go, a name the filesystem cannot encode): exit 4 naming the package.
_NAME_ERRNOS = frozenset(
    {errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.EILSEQ, errno.EINVAL}
)


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
    def __init__(self, source: BaseSource, cache: Cache, *, parallel: int, strict: bool) -> None:
        self.source = source
        self.cache = cache
        self.parallel = max(1, parallel)
        self.strict = strict
        self.warnings: list[str] = []

    def stage(self, plan: PackagePlan, dest_root: Path, advance=None) -> list[LockedFile]:  # type: ignore[no-untyped-def]
        """Fetch every planned file into dest_root; returns the verified file records."""

        collision = find_path_collision(f.path for f in plan.files)
        if collision is not None:  # 'a' and 'a/b' (or 'A' and 'a'): one would clobber the other
            raise UnsafePathError(
                f"{plan.package_id}: {collision[0]!r} and {collision[1]!r} cannot both be "
                "files (one is the folder of the other, or they differ only in case)",
                hint="the package is malformed; report it to the registry maintainers",
            )

        def one(f: PlannedFile) -> LockedFile:
            rec = self._fetch_one(plan, f, dest_root)
            if advance is not None:
                advance()
            return rec

        # libgit2 repositories and local disks gain nothing from threads; HTTP does.
        workers = self.parallel if self.source.parallel_fetch else 1
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
            kind = _check_kind(rec.path)
            if kind is None:
                continue
            hidden = self._checked(rec.sha256, kind)
            if hidden is None:  # not judged before: parse (exit 4 on bad syntax) and scan
                hidden = self._check(kind, plan.package_id, dest_root, rec.path)
                self._mark_checked(rec.sha256, kind, hidden)
            self._report_hidden(plan.package_id, rec.path, hidden)
        return records

    def _fetch_one(self, plan: PackagePlan, f: PlannedFile, dest_root: Path) -> LockedFile:
        try:
            return self._fetch_into(plan, f, dest_root)
        except OSError as exc:
            if exc.errno not in _NAME_ERRNOS:
                raise  # disk full, read-only home, permissions: the home's problem (exit 1)
            # The registry named a file this filesystem cannot hold: its error, not the home's.
            raise UnsafePathError(
                f"{plan.package_id}: cannot create {f.path!r} ({exc.strerror or exc})",
                hint="the package names a file this system cannot store; "
                "report it to the registry maintainers",
            ) from None

    def _fetch_into(self, plan: PackagePlan, f: PlannedFile, dest_root: Path) -> LockedFile:
        dest = safe_join(dest_root, f.path, f"file path in {plan.package_id}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        # One verified store (docs/RELIABILITY.md "One verified store"): a file is a hardlink of its
        # blob where the filesystem allows. Not an executable: a mode belongs to the inode,
        # and every other link of the blob would turn executable (or lose the bit) with it.
        link = not f.executable
        sha: str | None = None
        placed = self.cache.link_blob(f.sha256, dest, link=link) if f.sha256 else None
        if placed is not None:  # verified against its name, which is the expected hash
            sha, size = f.sha256, placed[0]
        else:  # absent, or damaged (then dropped): fetch for real
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
            # Local registries too: a folder registry beside ten projects is one store, not
            # ten copies (and the user's registry files are never linked into a home).
            if link:
                self.cache.share(sha, dest)
            else:
                self.cache.store_blob(sha, dest)
        assert sha is not None
        if f.executable or os.stat(dest).st_nlink == 1:  # a copy of its own: 0o755 / 0o644
            set_executable(dest, f.executable)
        return LockedFile(f.path, sha, size, f.executable)

    def _check(self, kind: str, package_id: str, root: Path, relpath: str) -> list[str]:
        """The hidden characters of a staged file (sorted, once each) after its checks."""
        data = root.joinpath(*relpath.split("/")).read_bytes()
        if kind == "ttl":
            text = self._check_turtle(package_id, relpath, data)
        elif kind == "json":
            text = _json_text(package_id, relpath, data)
        else:  # SKILL.md, served to agents as is
            text = data.decode("utf-8", "replace")
        return sorted(set(find_hidden_unicode(text)))

    # A file's checks are a function of its bytes: their verdict is kept beside its blob, so
    # a home restoring files another home installed (ten projects, one store) links them
    # without parsing and scanning them again. Keyed by the checks' version and the Unicode
    # database the hidden set derives from; anything unreadable is judged again.
    def _verdict(self, sha256: str, kind: str) -> Path:
        folder = f"checked-{_CHECKS_VERSION}-{unicodedata.unidata_version}"
        return self.cache.root / "derived" / folder / sha256[:2] / f"{sha256}.{kind}"

    def _checked(self, sha256: str, kind: str) -> list[str] | None:
        try:
            value = jsonio.loads_derived(self._verdict(sha256, kind).read_bytes())
        except (OSError, ValueError):
            return None
        ok = isinstance(value, list) and all(isinstance(c, str) for c in value)
        return value if ok else None

    def _mark_checked(self, sha256: str, kind: str, hidden: list[str]) -> None:
        # a cache: losing it costs a check; a symlink planted in it is refused (exit 4) as
        # at every folder of the cache (fsutil: guarded roots)
        with contextlib.suppress(OSError):
            self.cache.write(self._verdict(sha256, kind), json.dumps(hidden).encode())

    def _check_turtle(self, package_id: str, relpath: str, data: bytes) -> str:
        source = f"{package_id}: {relpath}"
        if b"\\u" in data or b"\\U" in data:  # escapes can spell hidden characters
            quads = parse_turtle(data, source)  # the one reader; exit 4
            return readable_text(data, quads)
        check_turtle(data, source)  # readable_text would be the raw text: syntax only
        return data.decode("utf-8", "replace")

    def _report_hidden(self, package_id: str, relpath: str, hidden: list[str]) -> None:
        if hidden:
            msg = (
                f"{package_id}: {relpath} contains invisible/bidi characters "
                f"({', '.join(hidden[:5])}) that can hide instructions"
            )
            if self.strict:
                raise IntegrityError(msg, hint="inspect the file; drop --strict to accept it")
            self.warnings.append(msg)


_CHECKS_VERSION = 1  # raise when a check below changes what it finds


def _check_kind(relpath: str) -> str | None:
    if relpath.endswith(".ttl"):
        return "ttl"
    if relpath == "package.json" or relpath.endswith("intents.json"):
        return "json"
    return "skillmd" if relpath.rsplit("/", 1)[-1] == "SKILL.md" else None


def _json_text(package_id: str, relpath: str, data: bytes) -> str:
    """Intents and descriptions an agent reads: hidden Unicode, raw or \\u-escaped."""
    text = data.decode("utf-8", "replace")
    intents = relpath.endswith("intents.json")
    if intents:
        # Over the vector bounds is refused now (exit 4); a merely malformed file is not
        # ours to judge here: it is reported where it is used.
        with contextlib.suppress(FormatError, UnsafePathError):
            parse_intents(data, source=f"{package_id}: {relpath}")
    if b"\\u" in data:
        items = limits.MAX_INTENTS_ITEMS if intents else limits.MAX_JSON_ITEMS
        with contextlib.suppress(OntoskillsError):
            value = jsonio.loads(data, source=relpath, max_items=items)
            text += json.dumps(value, ensure_ascii=False)
    return text
