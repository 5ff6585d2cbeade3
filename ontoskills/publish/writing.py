"""The writing half of a publish into one registry (publish.py decides, this writes): sign a
signed registry's new targets, stage the package, commit (git: the tree checked, then HEAD
moved by compare-and-swap, before the work tree changes), swap the folder in, write the index,
the sparse index and the metadata, push a remote's branch."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..fsutil import atomic_write_bytes
from ..manifest import parse_manifest
from ..progress import Reporter
from ..registries import slug_for_url
from ..sources.sparse import CONFIG as SPARSE_CONFIG
from ..sources.sparse import sparse_files, write_sparse_files
from . import gitcas, gitops, rules
from .files import MANIFEST
from .registry import INDEX
from .staging import Staging, expected_tree, holds_files, stage_files

if TYPE_CHECKING:
    from .publish import LocalPackage, PublishOptions, PublishResult


@dataclass
class Plan:
    """What a publish into one registry will write, decided before anything is written."""

    pkg_rel: str
    old_manifest: bytes  # the registry's package.json of this package ("": none)
    previous: str | None  # its version
    resume: bool  # a killed publish of these exact bytes is being completed
    repaired: bool  # leftovers of a killed publish were put right
    old_index: bytes
    new_index: bytes
    result: PublishResult


def write(
    pkg: LocalPackage,
    root: Path,
    kind: str,
    opts: PublishOptions,
    rep: Reporter,
    plan: Plan,
    git: gitcas.Checkout | None,
    remote_url: str | None,
) -> PublishResult:
    """Sign, stage, commit (git: compare-and-swap first), swap in, write the index, the
    sparse index and metadata, then push (remote)."""
    m, result, pkg_rel = pkg.manifest, plan.result, plan.pkg_rel
    repo = None if git is None else git.repo
    author = None
    if repo is not None:  # before writing: a missing author must leave the registry untouched
        author = gitops.author_for(repo, opts.author_name, opts.author_email)
    rep.stage(f"writing {m.package_id} {m.version}", total=len(result.files))
    sparse = (root / SPARSE_CONFIG).is_file()
    new_sparse = sparse_files(plan.new_index) if sparse else {}
    prefixes = [pkg_rel, INDEX, *(["index"] if sparse else [])]
    metadata = _sign(
        root, pkg, pkg_rel, plan.old_manifest, plan.new_index, new_sparse, opts, remote_url
    )
    prefixes += sorted(metadata)
    result.signed = sorted(metadata)
    write_pkg = not (plan.resume and holds_files(root, pkg_rel, m))
    files: dict[str, gitops.TreeFile] = {}
    with Staging(root, pkg_rel, active=write_pkg) as staging:
        blobs = stage_files(pkg, staging, repo)
        if repo is not None and git is not None and author is not None:
            files = {
                **{f"{pkg_rel}/{rel}": b for rel, b in blobs.items()},
                INDEX: gitops.TreeFile.of(repo, plan.new_index),
                **{rel: gitops.TreeFile.of(repo, body) for rel, body in new_sparse.items()},
                **{rel: gitops.TreeFile.of(repo, body) for rel, body in metadata.items()},
            }
            result.commit = _commit(
                pkg, git, files, prefixes, {**new_sparse, **metadata}, plan, opts, author
            )
        wrote = staging.swap()
    if plan.old_index != plan.new_index:
        atomic_write_bytes(root / INDEX, plan.new_index)
        wrote = True
    if sparse:  # a registry serving the sparse index keeps it in step (docs/SCALING.md)
        write_sparse_files(root, new_sparse)
    if metadata:  # signed registry: after the files they sign, timestamp last
        from ..signing.repo import write_files

        write_files(root, metadata)
        wrote = True
    if repo is None or result.commit is None:  # a folder, or HEAD already held this publish
        if plan.resume and not (wrote or plan.repaired):  # nothing was missing: a re-publish
            rules.check_version(m.package_id, m.version, plan.previous)
        return result
    gitcas.done(repo)  # the work tree holds the commit
    for warning in gitops.checkout_warnings(repo, sorted(files)):
        rep.warn(warning)
        result.warnings.append(warning)
    if kind == "remote":
        assert remote_url is not None
        author_name, pkg_name = m.package_id.split("/")
        result.branch = f"publish/{author_name}/{pkg_name}/{m.version}"
        rep.stage(f"pushing {result.branch}")
        gitops.push_branch(repo, remote_url, result.branch, result.commit)
    return result


def _commit(
    pkg: LocalPackage,
    git: gitcas.Checkout,
    files: dict[str, gitops.TreeFile],
    prefixes: list[str],
    extra: dict[str, bytes],
    plan: Plan,
    opts: PublishOptions,
    author: gitops.Author,
) -> str | None:
    """Build and check the commit's tree from the bytes we hashed BEFORE touching the work
    tree, the index or HEAD (a mismatch leaves the registry exactly as it was), then move
    HEAD (compare-and-swap) before the work tree changes. None: HEAD already holds exactly
    this tree (a re-run after a kill, when resuming)."""
    repo, m = git.repo, pkg.manifest
    tree = gitops.build_tree(repo, prefixes, files, git.base)
    want = expected_tree(pkg, plan.pkg_rel, plan.new_index, extra)
    gitops.verify_tree(repo, tree, prefixes, want)
    message = opts.message or f"Publish {m.package_id} {m.version}"
    try:
        return gitops.commit_tree(repo, tree, prefixes, files, message, author, git.base)
    except UsageError:
        if not plan.resume:
            raise
        gitcas.ensure_unchanged(repo, git.base)
        return None


def _sign(
    root: Path,
    pkg: LocalPackage,
    pkg_rel: str,
    old_manifest: bytes,
    new_index: bytes,
    new_sparse: dict[str, bytes],
    opts: PublishOptions,
    remote_url: str | None,
) -> dict[str, bytes]:
    """A signed registry (metadata/root.json): the new targets (every package file, its
    package.json, index.json, changed sparse files) and the re-signed bins, snapshot and
    timestamp, committed with the files they sign. {} for an unsigned registry."""
    from ..signing import ONLINE_ROLES, ROOT_PATH

    if not (root / ROOT_PATH).is_file():
        return {}
    from ..signing import keys as keymod
    from ..signing.repo import Repo

    def entry(data: bytes) -> tuple[str, int]:
        return hashlib.sha256(data).hexdigest(), len(data)

    # strict checks (load_package) made every listed file carry its sha256 and size
    upsert = {
        f"{pkg_rel}/{f.path}": (str(f.sha256), int(f.size or 0)) for f in pkg.manifest.files or ()
    }
    upsert[f"{pkg_rel}/{MANIFEST}"] = entry(pkg.data)
    upsert[INDEX] = entry(new_index)
    for rel, body in new_sparse.items():
        on_disk = root / rel
        if rel == SPARSE_CONFIG or not on_disk.is_file() or on_disk.read_bytes() != body:
            upsert[rel] = entry(body)
    remove = {f"{pkg_rel}/{MANIFEST}"}
    if old_manifest:
        old = parse_manifest(old_manifest, source=f"{pkg_rel}/{MANIFEST}")
        remove |= {f"{pkg_rel}/{f.path}" for f in old.files or ()}
    name = Path(slug_for_url(remote_url)) if remote_url else root
    keys_dir = keymod.resolve_keys_dir(opts.keys_dir, root, name=name.name)
    ring = keymod.load(keys_dir, ONLINE_ROLES)
    return Repo(root, ring).apply(upsert, remove - set(upsert))
