"""A registry folder as publish writes it: index.json (sorted, stable) and `registry init`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import jsonio, limits
from ..errors import BusyError, FormatError, RegistryChangedError, UsageError
from ..fsutil import atomic_write_bytes
from ..manifest import parse_index
from . import gitcas, gitops

if TYPE_CHECKING:
    from ..signing.admin import KeysWritten
    from ..signing.repo import Policy

INDEX = "index.json"
ENTRY_KEYS = ("package_id", "trust_tier", "source_kind", "manifest_path")

README = """# {name}

An OntoSkills registry in the OntoStore format, maintained with `ontoskills`.

```
index.json                      {{"packages": [{{package_id, trust_tier, manifest_path, ...}}]}}
packages/<author>/<pkg>/package.json  manifest, with a `files` array of sha256 hashes
packages/<author>/<pkg>/...           Turtle modules, intents.json, assets
```

Publish a package (validated, hashed, committed):

    ontoskills publish ./my-package --registry {location}

Check the whole registry (every manifest, module and hash):

    ontoskills registry verify {location}

Install from it:

    ontoskills --registry {location} install <author>/<package>
"""


def read_entries(root: Path) -> list[dict[str, Any]]:
    """The raw index entries (unknown fields kept); validated with the client's parser."""
    path = root / INDEX
    if not path.is_file():
        raise UsageError(
            f"{root} has no index.json",
            hint=f"create a registry with `ontoskills registry init {root}`",
        )
    data = path.read_bytes()
    parse_index(data, source=str(path))
    raw = jsonio.loads(
        data, source=str(path), max_bytes=limits.MAX_INDEX_BYTES, max_items=limits.MAX_INDEX_ITEMS
    )
    packages = raw.get("packages") if isinstance(raw, dict) else None
    if not isinstance(packages, list):
        raise FormatError(f"{path}: missing 'packages' list")
    return [dict(e) for e in packages]


def index_bytes(entries: list[dict[str, Any]]) -> bytes:
    """Sorted by package id, known keys first in a fixed order: the same input, same bytes."""
    out = []
    for e in sorted(entries, key=lambda x: str(x.get("package_id", ""))):
        known = {k: e[k] for k in ENTRY_KEYS if k in e}
        extra = {k: e[k] for k in sorted(e) if k not in ENTRY_KEYS}
        out.append({**known, **extra})
    return (json.dumps({"packages": out}, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def is_existing_registry(path: Path) -> bool:
    """A populated registry folder (`registry init --signed` signs it in place)."""
    return path.is_dir() and (path / INDEX).is_file()


def check_new_registry_folder(path: Path, *, signed: bool = False) -> None:
    """`registry init` only creates (`--signed` also signs an existing registry): checked
    first, before anything else can fail (a missing git author must not hide that the folder
    is the wrong one)."""
    if signed and is_existing_registry(path):
        from ..signing import ROOT_PATH

        if (path / ROOT_PATH).exists():
            raise UsageError(
                f"{path} is already signed ({ROOT_PATH} exists)",
                hint="refresh it with `ontoskills registry sign`, or rotate keys with "
                "`ontoskills registry keys rotate ROLE`",
            )
        return
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        hint = "give a new or empty folder"
        if is_existing_registry(path):
            hint = "to sign this existing registry: `ontoskills registry init --signed PATH`"
        raise UsageError(f"{path} exists and is not empty", hint=hint)


@dataclass
class SignedInit:
    """`registry init --signed`: where the new private keys go and the TUF policy."""

    keys_dir: Path
    policy: Policy
    written: KeysWritten | None = None  # filled in: key files and ids (never key material)


@dataclass(frozen=True)
class InitReport:
    """What `registry init` did (its `--json` document)."""

    path: Path
    existing: bool  # an existing registry was signed in place (`--signed`)
    commit: str | None  # the initial commit (None without git)
    keys: KeysWritten | None = None  # `--signed`: where the new private keys are, their ids

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "registry init",
            "path": str(self.path),
            "existing": self.existing,
            "commit": self.commit,
            "keys_dir": None if self.keys is None else str(self.keys.keys_dir),
            "keyids": {} if self.keys is None else self.keys.keyids,
        }


def init_registry(
    path: Path,
    *,
    git: bool = True,
    author: gitops.Author | None = None,
    sparse: bool = False,
    signed: SignedInit | None = None,
) -> str | None:
    """Create an empty registry; returns the initial commit (None without git).

    `sparse` also writes the per-package index (`index/config.json`, docs/SCALING.md), which
    `publish` then keeps in step, so clients fetch one small file per package. `signed` adds
    TUF metadata (`metadata/`, docs/SECURITY.md) signed with new keys kept outside; on an
    existing registry it signs what is there (`sign_existing`)."""
    check_new_registry_folder(path, signed=signed is not None)
    if signed is not None and is_existing_registry(path):
        return sign_existing(path, signed, git=git, author=author)
    path.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path / INDEX, index_bytes([]))
    name = path.resolve().name or "registry"
    atomic_write_bytes(
        path / "README.md", README.format(name=name, location=str(path)).encode("utf-8")
    )
    (path / "packages").mkdir(exist_ok=True)
    if sparse:
        from ..sources.sparse import write_sparse_index

        write_sparse_index(path)
    if signed is not None:
        from ..signing.admin import create, tree_targets
        from ..signing.repo import write_files

        files, signed.written = create(path, signed.keys_dir, signed.policy, tree_targets(path))
        write_files(path, files)
    if not git:
        return None
    repo = gitops.init_repo(path)
    return gitops.commit_paths(
        repo,
        [INDEX, "README.md", *(["index"] if sparse else []), *(["metadata"] if signed else [])],
        "Initialize OntoSkills registry",
        author or gitops.author_for(repo),
    )


def sign_existing(
    path: Path, signed: SignedInit, *, git: bool, author: gitops.Author | None
) -> str | None:
    """An unsigned registry becomes signed: every file clients read (index, sparse index,
    each indexed package's manifest and files, each checked against its manifest) becomes a
    signed target, and `metadata/` alone is committed on top. A git checkout must match its
    HEAD first: clients read the commit, so signing uncommitted bytes would sign files no
    client is served. Under the registry lock; the commit moves HEAD only if it is still the
    commit read first (gitcas.py), else the new keys are removed again (never used)."""
    from .publish import registry_lock

    with registry_lock(path, dry_run=False):
        checkout = gitcas.open_checkout(path) if git and gitops.is_repo(path) else None
        return _sign_existing(path, signed, checkout, author)


def _sign_existing(
    path: Path, signed: SignedInit, git: gitcas.Checkout | None, author: gitops.Author | None
) -> str | None:
    from ..signing.admin import create, tree_targets
    from ..signing.repo import write_files

    if git is not None:
        from .worktree import worktree_differences

        if git.base.commit is None:
            raise UsageError(f"{path} has no commit yet", hint="commit the registry first")
        diffs = [d for d in worktree_differences(path) if d.client_read]
        if diffs:
            shown = ", ".join(str(d) for d in diffs[:3]) + (" ..." if len(diffs) > 3 else "")
            raise UsageError(
                f"{path}: the work tree differs from HEAD ({shown}): signing it would sign "
                "bytes no client is served",
                hint="commit or discard those changes, then run it again",
            )
    who = None if git is None else author or gitops.author_for(git.repo)
    targets = tree_targets(path)  # before any key is written: a broken registry stays unsigned
    files, written = create(path, signed.keys_dir, signed.policy, targets)
    signed.written = written
    if git is None or who is None:
        write_files(path, files)
        return None
    message = "Sign the registry (TUF)"
    try:
        return gitops.commit_bytes(
            git.repo, files, message, who, git.base, lambda: write_files(path, files)
        )
    except (RegistryChangedError, BusyError):
        for key in written.files:  # refused before the commit: these keys sign nothing
            key.unlink(missing_ok=True)
        raise
