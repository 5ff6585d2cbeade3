"""A registry that is a local folder (e.g. a checkout, or the bundled registry/)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ..errors import LimitExceededError, NotFoundError, UnsafePathError
from ..fsutil import CHUNK
from ..paths import expand_user
from ..registries import RegistryConfig, RegistryKind
from ..safety import safe_join
from .base import BaseSource, RemoteFile, SourceOptions


class FolderSource(BaseSource):
    kind = RegistryKind.FOLDER
    is_local = True

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        super().__init__(config, options)
        url = config.url[len("file://") :] if config.url.startswith("file://") else config.url
        self.root = expand_user(url).absolute()

    def _path(self, relpath: str) -> Path:
        path = safe_join(self.root, relpath, "registry path")
        # safe_join resolves symlinked parents; a symlinked leaf is refused here too, so a
        # registry folder cannot smuggle in /etc/passwd as a package file.
        if path.is_symlink():
            raise UnsafePathError(f"{self.config.name}: {relpath} is a symlink")
        return path

    def _open(self, relpath: str) -> tuple[Path, os.stat_result]:
        path = self._path(relpath)
        try:
            st = os.stat(path, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):  # a/b where a is a file: no a/b
            raise NotFoundError(f"{self.config.name}: {relpath} not found in {self.root}") from None
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(f"{self.config.name}: {relpath} is not a regular file")
        return path, st

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        path, st = self._open(relpath)
        if st.st_size > max_bytes:
            raise LimitExceededError(f"{self.config.name}: {relpath} is larger than {max_bytes}")
        return path.read_bytes()

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        path, st = self._open(relpath)
        if st.st_size > max_bytes:
            raise LimitExceededError(f"{self.config.name}: {relpath} is larger than {max_bytes}")
        h = hashlib.sha256()
        size = 0
        with open(path, "rb") as src, open(dest, "wb") as out:
            while chunk := src.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:  # the file grew while we read it
                    raise LimitExceededError(f"{self.config.name}: {relpath} exceeds {max_bytes}")
                h.update(chunk)
                out.write(chunk)
        return h.hexdigest(), size

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        base = self._path(package_root) if package_root else self.root
        out: list[RemoteFile] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(dirnames):
                if os.path.islink(os.path.join(dirpath, name)):
                    rel = Path(dirpath, name).relative_to(base).as_posix()
                    raise UnsafePathError(f"{self.config.name}: {package_root}/{rel} is a symlink")
            for name in sorted(filenames):
                full = Path(dirpath, name)
                rel = full.relative_to(base).as_posix()
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    raise UnsafePathError(f"{self.config.name}: {package_root}/{rel} is a symlink")
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafePathError(f"{self.config.name}: {package_root}/{rel} is not a file")
                out.append(RemoteFile(rel, st.st_size, bool(st.st_mode & stat.S_IXUSR)))
        return out
