"""The journal of an install transaction: written by `Transaction.commit`, read by `recover`.

It lives in the home (`.staging/<id>/journal.json`), and everything in the home is untrusted
input: whoever can write there can hand `recover` a journal that names `/etc` or
`../../src` and wait for the next command to move or delete it. So the journal is read
like a registry manifest: a regular file (not a symlink, FIFO or device) under a size limit,
strict JSON, exactly the fields we write, and every path in exactly the shape `commit`
produces (`ontologies/author/<a>/<p>`, `new/<a>/<p>`, `old/<i>`), which confines it to the
home by construction. Anything else is refused (exit 4) with the next step, never followed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import jsonio
from ..errors import FormatError, IntegrityError, OntoskillsError, UnsafePathError
from ..fsutil import sha256_bytes
from ..lockfile import read_lock_bytes
from ..safety import is_valid_name

JOURNAL = "journal.json"
VERSION = 1
STATES = ("swapping", "committed")
MAX_JOURNAL_BYTES = 16 * 1024 * 1024  # ~120 bytes per package: room for 100k packages
MAX_LOCKFILE_PATH = 4096
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_KEYS = {"version", "state", "lockfile", "old_lock_sha256", "new_lock_sha256", "ops"}
_OP_KEYS = {"target", "new", "backup"}
TARGET_PREFIX = "ontologies/author/"


@dataclass
class Op:
    """Replace (or remove, when new is None) one package folder, relative to the home."""

    target: str
    new: str | None
    backup: str | None = None


@dataclass
class Journal:
    state: str
    lockfile: str
    old_lock_sha256: str | None
    new_lock_sha256: str | None
    ops: list[Op] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        doc = {"version": VERSION, **asdict(self)}
        return json.dumps(doc, indent=1).encode()


def lock_sha_kind(path: Path) -> bool:
    """True when the lockfile exists (through a symlink: lockfiles may be links); a FIFO,
    device or folder there is refused, so it is never opened (it could hang or never end)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(
            f"{path} is not a regular file", hint="a lockfile must be a regular file"
        )
    return True


def lock_sha(path: Path) -> str | None:
    """sha256 of a lockfile, None when absent. Read as every lockfile is read
    (`lockfile.read_lock_bytes`: opened non-blocking, a regular file under the size limit),
    so a FIFO or device there is exit 3 like for any other command, never a hang."""
    data = read_lock_bytes(path)
    return None if data is None else sha256_bytes(data)


def read_journal(path: Path) -> Journal | None:
    """The validated journal at path; None when there is none (nothing was moved yet)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise refuse(path, "a symlink", unsafe=True) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise refuse(path, "not a regular file", unsafe=True)
        data = fh.read(MAX_JOURNAL_BYTES + 1)
    if len(data) > MAX_JOURNAL_BYTES:
        raise refuse(path, f"larger than {MAX_JOURNAL_BYTES} bytes")
    try:
        doc = jsonio.loads(data, source=str(path))
    except OntoskillsError as exc:
        raise refuse(path, exc.message.split(": ", 1)[-1]) from None
    journal = _validate(path, doc)
    try:  # whatever the state says, a journal naming a device or FIFO is not ours
        lock_sha_kind(Path(journal.lockfile))
    except UnsafePathError as exc:
        raise refuse(path, f"its lockfile {exc.message}", unsafe=True) from None
    return journal


def _validate(path: Path, doc: object) -> Journal:
    if not isinstance(doc, dict) or set(doc) != _KEYS:
        raise refuse(path, f"does not have exactly the fields {sorted(_KEYS)}")
    if doc["version"] != VERSION or doc["state"] not in STATES:
        raise refuse(path, f"unknown version/state {doc['version']!r}/{doc['state']!r}")
    for key in ("old_lock_sha256", "new_lock_sha256"):
        value = doc[key]
        if value is not None and not (isinstance(value, str) and _SHA_RE.fullmatch(value)):
            raise refuse(path, f"{key} is not a sha256")
    lockfile = doc["lockfile"]
    if not (
        isinstance(lockfile, str)
        and 0 < len(lockfile) <= MAX_LOCKFILE_PATH
        and "\x00" not in lockfile
        and os.path.isabs(lockfile)
        and os.path.normpath(lockfile) == lockfile  # no '..', '.', '//' or trailing '/'
        and lockfile.isprintable()
    ):
        raise refuse(
            path, f"lockfile {lockfile!r:.200} is not a normalised absolute path", unsafe=True
        )
    raw_ops = doc["ops"]
    if not isinstance(raw_ops, list):
        raise refuse(path, "ops is not a list")
    ops: list[Op] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_ops):
        if not isinstance(raw, dict) or set(raw) != _OP_KEYS:
            raise refuse(path, f"op {i} does not have exactly the fields {sorted(_OP_KEYS)}")
        op = Op(raw["target"], raw["new"], raw["backup"])
        package_id = _package_of(op.target)
        if package_id is None or op.target in seen:
            raise refuse(
                path, f"op {i} names {op.target!r:.200}, not a package folder", unsafe=True
            )
        seen.add(op.target)
        if op.new is not None and op.new != f"new/{package_id}":
            raise refuse(
                path, f"op {i}: staged folder {op.new!r:.200} is not new/{package_id}", unsafe=True
            )
        if op.backup is not None and op.backup != f"old/{i}":
            raise refuse(path, f"op {i}: backup {op.backup!r:.200} is not old/{i}", unsafe=True)
        ops.append(op)
    return Journal(doc["state"], lockfile, doc["old_lock_sha256"], doc["new_lock_sha256"], ops)


def _package_of(target: object) -> str | None:
    """author/pkg when target is exactly `ontologies/author/<author>/<pkg>`."""
    if not isinstance(target, str) or not target.startswith(TARGET_PREFIX):
        return None
    parts = target[len(TARGET_PREFIX) :].split("/")
    if len(parts) != 2 or not all(is_valid_name(p) for p in parts):
        return None
    return "/".join(parts)


def refuse(path: Path, why: str, *, unsafe: bool = False) -> IntegrityError:
    """The error for a journal we will not act on: exit 4, and what to do instead."""
    txn = path.parent
    err_class = UnsafePathError if unsafe else FormatError
    return err_class(
        f"{path}: {why}; ontoskills did not write this journal and will not act on it",
        hint=f"move {txn} out of the home (it may hold the previous package folders), then "
        "run `ontoskills install` to restore the tree from the lockfile",
    )
