"""Where things live: the home (installed tree + machine state) and the download cache.

The home layout is compatible with the reference tooling, so existing OntoSkills MCP servers
can read what we install:

    $ONTOSKILLS_HOME/                      (default ~/.ontoskills)
      ontologies/author/<author>/<pkg>/    packages, byte for byte as published
      ontologies/system/embeddings/        model.onnx + tokenizer.json
      ontologies/<anything else>/          local skills (ontoskill.ttl), tier "local"
      ontoskills.lock                      default lockfile
      config.toml                          registries and settings
      state/                               machine state: process lock, derived data, journal
      .staging/                            install transactions (same filesystem as the tree)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import platformdirs

from . import cachedir
from .errors import UsageError
from .filelink import Placed, hash_regular, place_file
from .fsutil import CHUNK, check_path, guard_root, make_dirs, remove_file

ENV_HOME = "ONTOSKILLS_HOME"
ENV_CACHE = "ONTOSKILLS_CACHE_DIR"
ENV_LOCKFILE = "ONTOSKILLS_LOCKFILE"
LOCKFILE_NAME = "ontoskills.lock"


def expand_user(raw: str | os.PathLike[str]) -> Path:
    """Path.expanduser() that turns an unknown `~user` into a usage error, not a traceback."""
    try:
        return Path(raw).expanduser()
    except RuntimeError:
        raise UsageError(
            f"cannot expand {str(raw)!r}: no such user", hint="use an absolute path"
        ) from None


def _absolute(raw: str | os.PathLike[str]) -> Path:
    """Absolute and normalised (`--home ../h` is `/x/h`): paths we record (the journal's
    lockfile, mcp-config's arguments) and compare must not depend on how they were typed."""
    return Path(os.path.abspath(expand_user(raw)))


@dataclass(frozen=True)
class Home:
    """The home. Every folder in it is untrusted input: a symlink planted at any of them is
    refused by fsutil's write/remove primitives (see fsutil: guarded roots)."""

    root: Path

    def __post_init__(self) -> None:
        # Every Home is absolute and normalised however it was made (`--home ./h`, an API
        # caller's `Home(Path("h"))`): module IRIs (`Path.as_uri`), snapshot records, the
        # journal's paths and the guarded root all assume it, and a later chdir cannot move it.
        object.__setattr__(self, "root", Path(os.path.abspath(self.root)))
        guard_root(self.root)

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Home:
        raw = explicit or os.environ.get(ENV_HOME) or Path.home() / ".ontoskills"
        return cls(_absolute(raw))

    @property
    def ontologies(self) -> Path:
        return self.root / "ontologies"

    @property
    def author_dir(self) -> Path:
        return self.ontologies / "author"

    @property
    def system_dir(self) -> Path:
        return self.ontologies / "system"

    @property
    def embeddings_dir(self) -> Path:
        return self.system_dir / "embeddings"

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def default_lockfile(self) -> Path:
        return self.root / LOCKFILE_NAME

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def process_lock(self) -> Path:
        return self.state_dir / "home.lock"

    @property
    def derived_dir(self) -> Path:
        """Data we compute from verified files (vectors, search index); never verified content."""
        return self.state_dir / "derived"

    @property
    def staging_dir(self) -> Path:
        return self.root / ".staging"

    def package_dir(self, package_id: str) -> Path:
        author, name = package_id.split("/", 1)
        return self.author_dir / author / name

    def lockfile(self, explicit: str | os.PathLike[str] | None = None) -> Path:
        raw = explicit or os.environ.get(ENV_LOCKFILE)
        return _absolute(raw) if raw else self.default_lockfile


@dataclass(frozen=True)
class Cache:
    """Content-addressed download cache, safe to delete at any time."""

    root: Path
    # Every name ontoskills writes at the top of the cache (blobs, git clones, HTTP metadata,
    # temp files, the model stamps and derived vectors of embeddings/): `clean` removes these.
    MANAGED = ("blobs", "git", "http", "tmp", "models", "derived")

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(os.path.abspath(self.root)))  # as Home
        guard_root(self.root)

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Cache:
        raw = explicit or os.environ.get(ENV_CACHE) or platformdirs.user_cache_dir("ontoskills")
        return cls(_absolute(raw))

    @property
    def blobs(self) -> Path:
        return self.root / "blobs" / "sha256"

    def blob(self, sha256: str) -> Path:
        return self.blobs / sha256[:2] / sha256

    # The one reader and writer of cache entries (install/fetch.py, sources/http.py). Entries
    # are verified on every use, so writes skip fsync: losing one costs a download, no more.
    def write(self, path: Path, data: bytes) -> None:
        """Replace `path` (under the cache) by `data`: a unique temp file in `tmp` + rename, so
        concurrent writers (threads or processes) never see or leave a half-written entry."""
        self._replace(path, lambda tmp: tmp.write_bytes(data))

    def store_blob(self, sha256: str, src: bytes | Path, *, link: bool = False) -> None:
        """Keep `src` (bytes, or a file we just verified) as the blob `sha256` unless there is
        one already. Bytes that do not hash to `sha256` are not stored. Blobs are read-only
        (0o444): with `link`, `src` itself becomes the blob (one inode, no second write)
        where the filesystem allows, so the caller must not change its mode afterwards."""
        blob = self.blob(sha256)
        if blob.is_file():
            return  # if damaged, the next read drops it (read_blob, copy_blob, link_blob)
        if link and isinstance(src, Path):
            if hash_regular(src)[0] == sha256:
                self._replace(blob, lambda tmp: place_file(src, tmp, link=True), fresh=True)
            return
        digest = hashlib.sha256()

        def fill(tmp: Path) -> None:
            with open(tmp, "wb") as out:
                chunks = [src] if isinstance(src, bytes) else _chunks(src)
                for chunk in chunks:
                    digest.update(chunk)
                    out.write(chunk)
            if digest.hexdigest() != sha256:
                raise _Mismatch

        with contextlib.suppress(_Mismatch):
            self._replace(blob, fill, fresh=True)

    def link_blob(self, sha256: str, dest: Path, *, link: bool = True) -> tuple[int, Placed] | None:
        """Place the blob at `dest` (which must not exist): hardlinked when `link` and the
        filesystem allow, else reflinked or copied (filelink.place_file); returns its size and
        how, or None when it is absent or damaged (then dropped, `dest` not left behind).

        A file edited through another home's link changes the blob too, so the bytes are
        re-verified AFTER placing them, on the very inode `dest` now names: what is linked is
        what was checked. A blob we do not own is copied, never linked: its owner could
        rewrite it under every home linked to it."""
        blob = self.blob(sha256)
        try:
            st = os.lstat(blob)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):  # planted FIFO, device or symlink: never placed
            with contextlib.suppress(OSError):
                remove_file(blob)
            return None
        link = link and st.st_uid == getattr(os, "geteuid", lambda: st.st_uid)()
        try:
            how = place_file(blob, dest, link=link)
        except FileNotFoundError:
            return None  # dropped or cleaned by another process meanwhile: fetch instead
        digest, size = hash_regular(dest)
        if digest != sha256:
            remove_file(dest)
            with contextlib.suppress(OSError):  # unless another process replaced it since
                if os.path.samestat(st, os.lstat(blob)):
                    remove_file(blob)
            return None
        if how is Placed.LINKED and stat.S_IMODE(st.st_mode) != 0o444:
            # stored by an older version, or chmod-ed through another home's link
            with contextlib.suppress(OSError):
                os.chmod(dest, 0o444)
        return size, how

    def share(self, sha256: str, staged: Path) -> None:
        """After a verified download: keep `staged` as the blob, or when another install
        stored it already, make `staged` a link to it, so every home shares one inode."""
        blob = self.blob(sha256)
        try:
            same_device = os.stat(blob).st_dev == os.stat(staged).st_dev
        except OSError:
            same_device = False
        if same_device:
            tmp = staged.with_name(f".ontoskills-{uuid.uuid4().hex}.link")
            placed = self.link_blob(sha256, tmp)
            if placed is not None and placed[1] is Placed.LINKED:
                os.replace(tmp, staged)
                return
            if placed is not None:
                os.unlink(tmp)
        self.store_blob(sha256, staged, link=True)

    def read_blob(self, sha256: str) -> bytes | None:
        """The blob's bytes if it is there and intact; a damaged blob is dropped."""
        src = self._open_blob(sha256)
        if src is None:
            return None
        with src:
            data = src.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            remove_file(self.blob(sha256))
            return None
        return data

    def copy_blob(self, sha256: str, dest: Path) -> int | None:
        """Copy the blob to `dest` (truncated first) and return its size, or None when it is
        absent or damaged (then dropped; `dest` holds junk the caller overwrites)."""
        digest = hashlib.sha256()
        size = 0
        src = self._open_blob(sha256)
        if src is None:
            return None
        with src, open(dest, "wb") as out:  # errors writing dest are the caller's to map
            for chunk in _chunks(src):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256:
            remove_file(self.blob(sha256))
            return None
        return size

    def _open_blob(self, sha256: str) -> BinaryIO | None:
        """The blob opened for reading, or None when absent or not a regular file. The cache
        is untrusted input (fsutil: guarded roots): a blob planted as a FIFO would block
        open() and one linked to /dev/zero would read forever, so open non-blocking, check
        what was opened, and drop anything that is not a regular file."""
        path = self.blob(sha256)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return None
        try:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            regular = False
        if not regular:
            os.close(fd)
            with contextlib.suppress(OSError):
                remove_file(path)
            return None
        return os.fdopen(fd, "rb")

    def ensure_root(self) -> None:
        """Create the cache folder, tagged as ours (cachedir.py)."""
        cachedir.ensure_root(self.root)

    def tagged(self) -> bool:
        return cachedir.tagged(self.root)

    def clean(self) -> int:
        """`cache clean`: the MANAGED names removed, bytes freed returned (cachedir.py)."""
        return cachedir.clean(self.root, self.MANAGED)

    def _replace(self, path: Path, fill: Callable[[Path], object], *, fresh: bool = False) -> None:
        """`fill` writes a unique temp name in `tmp` (fresh: the name does not exist yet, for
        a link), then the name replaces `path`; a blob (fresh) is made read-only first."""
        # the cache is a guarded root: no write through a planted link (fsutil)
        check_path(path, leaf=False)
        self.ensure_root()
        make_dirs(path.parent)
        make_dirs(self.tmp)
        fd, name = tempfile.mkstemp(dir=self.tmp, suffix=".part")
        os.close(fd)
        tmp = Path(name)
        try:
            if fresh:
                os.unlink(tmp)  # mkstemp's random name, free again: place_file creates it
            fill(tmp)
            if fresh:
                os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @property
    def http_dir(self) -> Path:
        """Per-URL metadata (ETag, body digest) for revalidation and offline use."""
        return self.root / "http"

    @property
    def git_dir(self) -> Path:
        return self.root / "git"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"


class _Mismatch(Exception):
    """The bytes offered for a blob do not hash to its name: nothing is stored."""


def _chunks(src: Path | BinaryIO) -> Iterator[bytes]:
    if isinstance(src, Path):
        with open(src, "rb") as fh:
            yield from _chunks(fh)
        return
    while chunk := src.read(CHUNK):
        yield chunk
