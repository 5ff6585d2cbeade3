"""How `publish` writes a package into a LOCAL registry folder (docs/PUBLISHING.md).

The package is copied into a hidden sibling folder (`.<pkg>.publish-<pid>`) from bytes read
once and checked against the manifest (the same bytes become the git blobs), then swapped in
with renames; a killed publish's leftovers are undone by the next one under the registry
lock. The registry's own folders are maintainer-controlled input too: a symlink among the
paths a publish writes or deletes (`packages/<author>/<pkg>`, `index.json`, `index/`) is
refused, so a merged pull request cannot point a publish at files outside the registry or
make it delete them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import IntegrityError, UnsafePathError
from ..fsutil import atomic_write_bytes, remove_tree, sha256_file
from ..manifest import FileEntry, Manifest
from ..safety import safe_join
from . import gitops
from .files import MANIFEST
from .registry import INDEX

if TYPE_CHECKING:  # publish.py imports this module
    from .publish import LocalPackage


def refuse_symlinks(root: Path, pkg_rel: str) -> None:
    """No symlink at any path a publish writes, renames or deletes (exit 4)."""
    parts = pkg_rel.split("/")
    paths = ["/".join(parts[: i + 1]) for i in range(len(parts))] + [INDEX, "index"]
    index_dir = root / "index"
    if index_dir.is_dir() and not index_dir.is_symlink():
        for dirpath, dirnames, filenames in os.walk(index_dir):
            base = Path(dirpath).relative_to(root).as_posix()
            paths.extend(f"{base}/{n}" for n in [*dirnames, *filenames])
    for rel in paths:
        if (root / rel).is_symlink():
            raise UnsafePathError(
                f"{root}: {rel} is a symlink; a publish never writes through links",
                hint="a registry holds regular folders and files: replace the link",
            )


class Staging:
    """The hidden sibling folder a package is copied into before one rename swaps it in;
    removed on any failure (and by `_recover_interrupted` after a kill)."""

    def __init__(self, root: Path, pkg_rel: str, *, active: bool) -> None:
        self.final = safe_join(root, pkg_rel, "package folder")
        self.stage = self.final.parent / f".{self.final.name}.publish-{os.getpid()}"
        self.old = self.final.parent / f".{self.final.name}.old-{os.getpid()}"
        self.active = active

    def __enter__(self) -> Staging:
        if self.active:
            self.final.parent.mkdir(parents=True, exist_ok=True)
            remove_tree(self.stage)
        return self

    def write(self, rel: str, data: bytes, executable: bool) -> None:
        dest = self.stage / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        os.chmod(dest, 0o755 if executable else 0o644)

    def swap(self) -> bool:
        if not self.active:
            return False
        if self.final.exists():
            os.replace(self.final, self.old)
        os.replace(self.stage, self.final)
        return True

    def __exit__(self, *exc: object) -> None:
        if self.active:
            remove_tree(self.stage)
            remove_tree(self.old)


def stage_files(
    pkg: LocalPackage, staging: Staging, repo: gitops.pygit2.Repository | None
) -> dict[str, gitops.TreeFile]:
    """Read every listed file once, check its bytes against the manifest, and write THOSE
    bytes to the staging folder and (git) as a blob: what is hashed is what is published."""
    blobs: dict[str, gitops.TreeFile] = {}
    for f in pkg.manifest.files or ():
        data = (pkg.root / f.path).read_bytes()
        if len(data) != f.size or hashlib.sha256(data).hexdigest() != f.sha256:
            raise IntegrityError(
                f"{f.path} changed while publishing",
                hint="run `ontoskills pack` again, then publish",
            )
        if staging.active:
            staging.write(f.path, data, f.executable)
        if repo is not None:
            blobs[f.path] = gitops.TreeFile.of(repo, data, f.executable)
    if staging.active:
        atomic_write_bytes(staging.stage / MANIFEST, pkg.data)
    if repo is not None:
        blobs[MANIFEST] = gitops.TreeFile.of(repo, pkg.data)
    return blobs


def _expected(f: FileEntry) -> gitops.Expected:
    if f.sha256 is None or f.size is None:  # the strict package check refused such a manifest
        raise AssertionError(f"{f.path}: a checked manifest lists it without sha256 and size")
    return gitops.Expected(f.sha256, f.size, f.executable)


def expected_tree(
    pkg: LocalPackage, pkg_rel: str, index: bytes, sparse: dict[str, bytes]
) -> dict[str, gitops.Expected]:
    """What the commit must hold under the paths a publish replaces: the manifest's hashes."""
    want = {f"{pkg_rel}/{f.path}": _expected(f) for f in pkg.manifest.files or ()}
    want[f"{pkg_rel}/{MANIFEST}"] = gitops.Expected.of(pkg.data)
    want[INDEX] = gitops.Expected.of(index)
    want.update({rel: gitops.Expected.of(body) for rel, body in sparse.items()})
    return want


def recover_interrupted(root: Path, pkg_rel: str) -> bool:
    """Undo what a killed publish of this package left (we hold the registry lock, so its
    writer is dead): an incomplete staging copy is dropped; a previous version moved aside
    just before the swap goes back if the new one never arrived; temp index files go.
    Returns whether there was anything to undo."""
    final = safe_join(root, pkg_rel, "package folder")
    found = False
    if final.parent.is_dir():
        for old in sorted(final.parent.glob(f".{final.name}.old-*")):
            found = True
            if final.exists():
                remove_tree(old)
            else:
                os.replace(old, final)
        for stage in final.parent.glob(f".{final.name}.publish-*"):
            found = True
            remove_tree(stage)
    for tmp in root.glob(f".{INDEX}.*.tmp"):  # fsutil.atomic_write_bytes's temp name
        found = True
        tmp.unlink(missing_ok=True)
    return found


def holds_files(root: Path, pkg_rel: str, m: Manifest) -> bool:
    """Whether the registry's package folder has every listed file with its hash and mode."""
    final = safe_join(root, pkg_rel, "package folder")
    for f in m.files or ():
        path = final / f.path
        if not path.is_file() or path.is_symlink():
            return False
        if sha256_file(path) != (f.sha256, f.size):
            return False
        if bool(path.stat().st_mode & 0o100) != bool(f.executable):
            return False
    return True
