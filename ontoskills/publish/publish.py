"""`publish`: validate a packed folder and write it into a registry (folder, git, remote git).

Local registries are written under a cross-process file lock (concurrent publishes cannot
lose an index entry): the package folder is staged next to its final place and swapped in
with renames, then index.json is replaced atomically, then (git) both are committed. A
remote registry is cloned to a temporary folder, committed on a branch
`publish/<author>/<pkg>/<version>` and pushed for review. `dry_run` writes nothing anywhere.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import filelock

from .. import envvars, limits
from ..errors import BusyError, NotFoundError, UsageError
from ..manifest import Manifest, parse_manifest
from ..ownership import Keep, check_target
from ..progress import NullReporter, Reporter
from ..redact import redact_url
from ..registries import RegistryConfig, RegistryKind, slug_for_url
from ..safety import safe_join, split_package_id
from ..sources import check_location
from ..sources._gitremote import is_network_remote
from ..sources.git import check_ref_component
from . import gitcas, gitops, rules
from .checks import check_package, first_error
from .files import MANIFEST, walk_package
from .registry import INDEX, index_bytes, read_entries
from .staging import recover_interrupted, refuse_symlinks
from .writing import Plan, write


@dataclass
class PublishOptions:
    registry: str
    dry_run: bool = False
    message: str | None = None
    trust: str | None = None
    force: bool = False
    author_name: str | None = None
    author_email: str | None = None
    keys_dir: Path | None = None  # signed registries: where the online keys are
    keep: tuple[Keep, ...] = ()  # folders the package folder a publish replaces must not reach


@dataclass
class PublishResult:
    package_id: str
    version: str
    registry: str
    target: str  # folder | git | remote
    trust_tier: str = "community"
    previous_version: str | None = None
    dry_run: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)
    diff: dict[str, str] = field(default_factory=dict)
    commit: str | None = None
    branch: str | None = None
    warnings: list[str] = field(default_factory=list)
    signed: list[str] = field(default_factory=list)  # metadata files re-signed (TUF)

    def to_json(self) -> dict[str, Any]:
        """`publish --json` (the warnings are the command's: they went through the reporter)."""
        return {
            "command": "publish",
            "package_id": self.package_id,
            "version": self.version,
            "registry": redact_url(self.registry),  # the URL as typed: credentials out
            "target": self.target,
            "trust_tier": self.trust_tier,
            "previous_version": self.previous_version,
            "dry_run": self.dry_run,
            "files": [dict(f) for f in self.files],
            "diff": dict(self.diff),
            "commit": self.commit,
            "branch": self.branch,
            "signed": list(self.signed),  # TUF metadata re-signed ([] for an unsigned registry)
        }


@dataclass
class LocalPackage:
    root: Path
    manifest: Manifest
    data: bytes
    warnings: list[str]


def load_package(root: Path) -> LocalPackage:
    """Everything `publish` validates before touching a registry (strict mode)."""
    path = root / MANIFEST
    if not path.is_file():
        raise NotFoundError(f"{root} has no package.json", hint=f"run `ontoskills pack {root}`")
    data = path.read_bytes()
    raw_id = _peek_id(data)
    listing = {p: os.lstat(root / p).st_size for p in walk_package(root)}

    def read(rel: str) -> bytes:
        return safe_join(root, rel, "package file").read_bytes()

    pc = check_package(raw_id, data, read, listing, strict=True, stray_is_error=False)
    err = first_error(pc)
    if err is not None:
        raise err
    assert pc.manifest is not None
    warnings = [f.message for f in pc.findings if f.level == "warning"]
    return LocalPackage(root, pc.manifest, data, warnings)


def _peek_id(data: bytes) -> str:
    from .. import jsonio

    raw = jsonio.loads(data, source=MANIFEST, max_bytes=limits.MAX_MANIFEST_BYTES)
    pid = raw.get("package_id") if isinstance(raw, dict) else None
    split_package_id(pid, "package_id in package.json")
    return str(pid)


def publish(pkg_dir: Path, opts: PublishOptions, reporter: Reporter | None = None) -> PublishResult:
    rep = reporter or NullReporter()
    rep.stage("validating package")
    pkg = load_package(pkg_dir)
    for w in pkg.warnings:
        rep.warn(w)
    # The version names the publish branch: refuse it by name before any git call.
    rules.version_key(pkg.manifest.version)
    check_ref_component(pkg.manifest.version, "version")
    location = opts.registry
    if location.startswith("oci://"):  # an OCI registry: an artifact per version (oci.py)
        from .oci import publish_oci

        return publish_oci(pkg, opts, rep)
    local = Path(location).expanduser()
    if "://" not in location and local.is_dir() and not gitops.is_bare_repo(local):
        kind = "git" if gitops.is_repo(local) else "folder"
        with registry_lock(local, dry_run=opts.dry_run):
            return _publish_into(pkg, local, kind, opts, rep, own=True)
    if "://" not in location and not is_network_remote(location):
        if not local.exists():
            raise UsageError(
                f"registry {location} does not exist",
                hint=f"create it with `ontoskills registry init {location}`",
            )
        # a file, /dev/zero, a FIFO, a socket: not a registry (exit 2), never a clone of it
        check_location(RegistryConfig(slug_for_url(location), location, RegistryKind.GIT))
    if opts.trust is not None:
        rules.decide_tier(pkg.manifest.package_id, None, opts.trust, own_registry=False)
    for part, what in zip(pkg.manifest.package_id.split("/"), ("author", "package"), strict=True):
        check_ref_component(part, what)  # publish/<author>/<pkg>/<version> must be a ref
    rep.stage(f"cloning {location}")
    with tempfile.TemporaryDirectory(prefix="ontoskills-publish-") as tmp:
        clone = gitops.clone(location, Path(tmp) / "registry")
        return _publish_into(
            pkg, Path(clone.workdir), "remote", opts, rep, own=False, remote_url=location
        )


@contextlib.contextmanager
def registry_lock(root: Path, *, dry_run: bool) -> Iterator[None]:
    """One writer per registry folder (publish, and the signing verbs: a command that finds a
    journal under it knows its writer is dead); kept outside the registry, never committed."""
    if dry_run:
        yield
        return
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"ontoskills-publish-{key}.lock"
    timeout = envvars.get(envvars.LOCK_TIMEOUT)
    try:
        with filelock.FileLock(str(path), timeout=timeout):
            yield
    except filelock.Timeout:
        raise BusyError(
            f"another publish to {root} is running",
            hint="wait for it, or raise ONTOSKILLS_LOCK_TIMEOUT",
        ) from None


def _publish_into(
    pkg: LocalPackage,
    root: Path,
    kind: str,
    opts: PublishOptions,
    rep: Reporter,
    *,
    own: bool,
    remote_url: str | None = None,
) -> PublishResult:
    # git: the commit this publish builds on is read first, HEAD moves only if still there
    git = None if kind == "folder" else gitcas.open_checkout(root, complete=not opts.dry_run)
    plan = _plan(pkg, root, kind, opts, rep, own=own, remote_url=remote_url, git=git)
    if opts.dry_run:
        return plan.result
    return write(pkg, root, kind, opts, rep, plan, git, remote_url)


def _plan(
    pkg: LocalPackage,
    root: Path,
    kind: str,
    opts: PublishOptions,
    rep: Reporter,
    *,
    own: bool,
    remote_url: str | None,
    git: gitcas.Checkout | None,
) -> Plan:
    """Checks (folder, version, name, tier) and what would change; writes nothing but the
    repair of a killed publish's leftovers."""
    m = pkg.manifest
    pid = m.package_id
    entries = read_entries(root)
    current = next((e for e in entries if e.get("package_id") == pid), None)
    pkg_rel = f"packages/{pid}"
    refuse_symlinks(root, pkg_rel)
    if kind != "remote":  # a local registry's package folder is replaced whole (staging.py)
        check_target(
            safe_join(root, pkg_rel, "package folder"),
            [Keep("the sources", pkg.root), *opts.keep],
            what="the registry's package folder",
            hint="publish from a folder outside the registry's packages/, into a registry "
            "outside the home and the cache",
        )
    repaired = False if opts.dry_run else recover_interrupted(root, pkg_rel)
    repaired = repaired or (git is not None and pkg_rel in git.finished)
    old_manifest, previous = _registry_manifest(root, pkg_rel, current)
    # A local publish killed after its files were swapped in but before the index write or
    # the git commit leaves exactly these manifest bytes in place: the re-run completes it.
    resume = (
        kind != "remote" and not opts.dry_run and previous == m.version and old_manifest == pkg.data
    )
    if not resume:
        rules.check_version(pid, m.version, previous)
    else:
        rep.warn(f"completing an interrupted publish of {pid} {m.version}")
    if current is None:
        rules.check_new_name(pid, [str(e.get("package_id")) for e in entries], opts.force)
    existing_tier = str(current.get("trust_tier", "community")) if current is not None else None
    tier = rules.decide_tier(pid, existing_tier, opts.trust, own_registry=own)
    result = PublishResult(
        pid, m.version, remote_url or str(root), kind, tier, previous, opts.dry_run
    )
    result.warnings = list(pkg.warnings)  # already reported above
    for warning in _dependency_warnings(root, entries, m):
        rep.warn(warning)
        result.warnings.append(warning)
    result.files = [
        {"path": f.path, "sha256": f.sha256, "size": f.size, "executable": f.executable}
        for f in m.files or ()
    ]
    new_entry = {
        **(current or {}),
        "package_id": pid,
        "trust_tier": tier,
        "source_kind": m.source_kind,
        "manifest_path": f"{pkg_rel}/{MANIFEST}",
    }
    new_entries = [e for e in entries if e.get("package_id") != pid] + [new_entry]
    old_index = (root / INDEX).read_bytes()
    new_index = index_bytes(new_entries)
    result.diff = {
        INDEX: _diff(old_index, new_index, INDEX),
        f"{pkg_rel}/{MANIFEST}": _diff(old_manifest, pkg.data, f"{pkg_rel}/{MANIFEST}"),
    }
    return Plan(pkg_rel, old_manifest, previous, resume, repaired, old_index, new_index, result)


def _registry_manifest(
    root: Path, pkg_rel: str, current: dict[str, Any] | None
) -> tuple[bytes, str | None]:
    """(bytes, version) of the package.json the registry holds for this package now."""
    if current is None:
        return b"", None
    manifest_rel = str(current.get("manifest_path", f"{pkg_rel}/{MANIFEST}"))
    old_path = safe_join(root, manifest_rel, "manifest path")
    if not old_path.is_file():
        return b"", None
    data = old_path.read_bytes()
    return data, parse_manifest(data, source=manifest_rel).version


def _dependency_warnings(root: Path, entries: list[dict[str, Any]], m: Manifest) -> list[str]:
    own = {s.id for s in m.skills}
    wanted = sorted({d for s in m.skills for d in s.depends_on if d not in own})
    if not wanted:
        return []
    found: dict[str, str] = {}
    for e in entries:
        if e.get("package_id") == m.package_id:
            continue
        with contextlib.suppress(Exception):  # a broken neighbour is `registry verify`'s job
            path = safe_join(root, str(e.get("manifest_path")), "manifest path")
            other = parse_manifest(path.read_bytes(), source=str(path))
            for s in other.skills:
                found.setdefault(s.id, other.package_id)
    out = []
    for dep in wanted:
        if dep in found:
            out.append(f"dependency {dep} resolves to {found[dep]}/{dep} (another package)")
        else:
            out.append(f"dependency {dep} is not in this package or the registry (unresolved)")
    return out


def _diff(old: bytes, new: bytes, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.decode("utf-8", "replace").splitlines(keepends=True),
            new.decode("utf-8", "replace").splitlines(keepends=True),
            fromfile=f"a/{name}" if old else "/dev/null",
            tofile=f"b/{name}",
        )
    )
