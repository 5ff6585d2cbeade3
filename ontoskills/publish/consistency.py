"""`registry verify` beyond one package at a time: everything else a client reads must agree.

- The sparse index (`index/config.json`, `index/<author>/<pkg>.json`, docs/SCALING.md) is
  what sparse clients read INSTEAD of `index.json`: every entry must say exactly what
  `index.json` says (tier, manifest path, version, every field), `config.json` must carry the
  digest of this `index.json`, and no entry may exist for a package `index.json` lacks. Any
  disagreement is an error: a reviewer reads `index.json`, a client may read the other.
- A local registry (a path): leftovers of a killed publish are warnings; for a git checkout,
  a work tree that differs from the verified commit is reported (publish/worktree.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .. import jsonio, limits
from ..errors import FormatError, NotFoundError, OntoskillsError
from ..sources import BaseSource
from ..sources.sparse import CONFIG, MAX_ENTRY_BYTES, read_sparse_config, sparse_files
from .checks import Finding
from .registry import INDEX
from .worktree import leftovers, worktree_differences


def sparse_findings(source: BaseSource, index_sha256: str) -> list[Finding]:
    """Errors for every way the sparse index disagrees with `index.json` (none without one)."""
    try:
        config_data = source.probe(CONFIG, max_bytes=MAX_ENTRY_BYTES)
    except OntoskillsError as exc:
        return [Finding("error", "sparse-config", f"{CONFIG}: {exc.message}", None, type(exc))]
    if config_data is None:
        return []  # no sparse index: clients read index.json only
    out: list[Finding] = []
    try:
        config = read_sparse_config(config_data, CONFIG)
        index_data = source.read(INDEX, max_bytes=limits.MAX_INDEX_BYTES)
        want = sparse_files(index_data)
    except OntoskillsError as exc:
        return [Finding("error", "sparse-config", exc.message, None, type(exc))]
    if not config.usable:
        return [
            Finding(
                "warning",
                "sparse-version",
                f"{CONFIG} has sparse_version {config.version!r}: clients ignore the sparse index",
            )
        ]
    if hashlib.sha256(index_data).hexdigest() != index_sha256:
        out.append(Finding("error", "sparse-config", f"{INDEX} changed while verifying"))
    expected_config = json.loads(want[CONFIG])
    for key in ("index_sha256", "packages"):
        if config.raw.get(key) != expected_config[key]:
            out.append(
                Finding(
                    "error",
                    "sparse-config",
                    f"{CONFIG}: {key} is {config.raw.get(key)!r}, {INDEX} gives "
                    f"{expected_config[key]!r} (the sparse index is stale or edited; "
                    "regenerate it, docs/SCALING.md)",
                    None,
                    FormatError,
                )
            )
    for rel, body in sorted(want.items()):
        if rel != CONFIG:
            out.extend(_entry_findings(source, rel, json.loads(body)))
    out.extend(_extra_entries(source, set(want)))
    return out


def _entry_findings(source: BaseSource, rel: str, want: dict[str, Any]) -> list[Finding]:
    pid = str(want.get("package_id"))
    try:
        got = jsonio.loads(source.read(rel, max_bytes=MAX_ENTRY_BYTES), source=rel)
    except NotFoundError:
        return [
            Finding(
                "warning",
                "sparse-missing",
                f"{rel} is missing: sparse clients fall back to {INDEX} for this package",
                pid,
            )
        ]
    except OntoskillsError as exc:
        return [Finding("error", "sparse-entry", exc.message, pid, type(exc))]
    if got == want:
        return []
    if not isinstance(got, dict):
        return [Finding("error", "sparse-entry", f"{rel} is not an object", pid, FormatError)]
    keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    said = "; ".join(f"{k}: {got.get(k)!r} here, {want.get(k)!r} in {INDEX}" for k in keys)
    return [
        Finding(
            "error",
            "sparse-mismatch",
            f"{rel} disagrees with {INDEX} ({said}); clients reading it would get a different "
            "entry (they take the less trusted tier); regenerate the sparse index "
            "(docs/SCALING.md)",
            pid,
            FormatError,
        )
    ]


def _extra_entries(source: BaseSource, wanted: set[str]) -> list[Finding]:
    """Sparse files for packages index.json does not list (a client would install them)."""
    try:
        listing = source.list_package("index")
    except OntoskillsError as exc:
        return [Finding("error", "unsafe-path", exc.message, None, type(exc))]
    out = []
    for f in listing or ():  # None: HTTP cannot list; entries are checked one by one above
        rel = f"index/{f.path}"
        if rel in wanted:
            continue
        parts = f.path.split("/")
        if len(parts) == 2 and parts[1].endswith(".json"):
            pid = f"{parts[0]}/{parts[1][: -len('.json')]}"
            out.append(
                Finding(
                    "error",
                    "sparse-extra",
                    f"{rel} names a package {INDEX} does not list: a sparse client would "
                    "install it",
                    pid,
                    FormatError,
                )
            )
        else:
            out.append(Finding("warning", "sparse-stray", f"{rel} is not part of the sparse index"))
    return out


def local_findings(root: Path, git_commit: str | None) -> list[Finding]:
    """Leftovers of killed publishes; for a git checkout verified at `git_commit`, every path
    where the work tree (what a folder client or a web server reads) differs from it."""
    out = [
        Finding(
            "warning",
            "leftover-publish",
            f"{rel} was left by a publish that did not finish (killed?): re-run that publish "
            "to complete it, or delete it",
        )
        for rel in leftovers(root)
    ]
    if git_commit is None or not (root / ".git").exists():
        return out
    diffs = worktree_differences(root, git_commit)
    for level, group in (
        ("error", [d for d in diffs if d.client_read]),
        ("warning", [d for d in diffs if not d.client_read]),
    ):
        if group:
            shown = ", ".join(map(str, group[:5])) + (" ..." if len(group) > 5 else "")
            out.append(
                Finding(
                    level,
                    "worktree-differs",
                    f"the work tree differs from the verified commit {git_commit[:12]} at "
                    f"{len(group)} path(s): {shown}; a folder client or a web server serving "
                    "this checkout reads these bytes, not the commit's (commit or discard them)",
                )
            )
    return out
