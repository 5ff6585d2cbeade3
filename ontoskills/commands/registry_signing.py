"""`ontoskills registry sign PATH` and `registry keys rotate|list` (signed registries)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import BusyError, RegistryChangedError, UsageError
from ..signing import ROLES
from ..words import plural
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import KeysOpt
from ._output import Output, run

if TYPE_CHECKING:
    from ..publish.gitcas import Checkout
    from ..publish.gitops import Author
    from ..signing.repo import KeyTable, Repo

AuthorName = Annotated[str | None, typer.Option("--author-name", help="Commit author name.")]
AuthorEmail = Annotated[str | None, typer.Option("--author-email", help="Commit author email.")]


def _open(path: Path, keys: Path | None, roles: tuple[str, ...]) -> tuple[Repo, Path]:
    from ..signing import ROOT_PATH
    from ..signing import keys as keymod
    from ..signing.repo import Repo

    if not (path / ROOT_PATH).is_file():
        raise UsageError(
            f"{path} is not a signed registry (no {ROOT_PATH})",
            hint="create one with `ontoskills registry init --signed PATH`",
        )
    keys_dir = keymod.resolve_keys_dir(keys, path)
    return Repo(path, keymod.load(keys_dir, roles)), keys_dir


@contextlib.contextmanager
def _checkout(
    path: Path, name: str | None, email: str | None
) -> Iterator[tuple[Checkout | None, Author | None]]:
    """Under the registry's lock (publish's): a git checkout is opened (a killed command's
    work tree completed, HEAD read) and its commit author found before anything is read or
    written; (None, None) for a plain folder."""
    from ..publish import gitcas, gitops
    from ..publish.publish import registry_lock

    with registry_lock(path, dry_run=False):
        git = gitcas.open_checkout(path) if gitops.is_repo(path) else None
        yield git, None if git is None else gitops.author_for(git.repo, name, email)


def _commit(
    path: Path, git: Checkout | None, author: Author | None, files: dict[str, bytes], message: str
) -> str | None:
    """Commit exactly the metadata on the HEAD read first, moved only if still there, then
    write it (roots first, timestamp last); a folder only gets it written."""
    from ..publish import gitops
    from ..signing.repo import write_files

    if not files:
        return None
    if git is None or author is None:
        write_files(path, files)
        return None
    return gitops.commit_bytes(
        git.repo, files, message, author, git.base, lambda: write_files(path, files)
    )


@dataclass(frozen=True)
class SignReport:
    """`registry sign`: the metadata files re-signed (and committed)."""

    path: Path
    signed: tuple[str, ...]  # metadata paths written, sorted
    commit: str | None
    expires: dict[str, str]  # every re-signed role -> its new expiry (ISO 8601)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "registry sign",
            "path": str(self.path),
            "signed": list(self.signed),
            "commit": self.commit,
            "expires": dict(self.expires),
        }


@dataclass(frozen=True)
class RotateReport:
    """`registry keys rotate`: the new root (and what it re-signed), the keys retired."""

    path: Path
    signed: tuple[str, ...]
    commit: str | None
    role: str
    keyids: tuple[str, ...]  # the role's new keys
    retired: tuple[str, ...]  # key ids replaced
    retired_files: int  # old key files moved to retired_dir
    retired_dir: Path

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "registry keys rotate",
            "path": str(self.path),
            "signed": list(self.signed),
            "commit": self.commit,
            "role": self.role,
            "keyids": list(self.keyids),
            "retired": list(self.retired),
            "retired_files": self.retired_files,
            "retired_dir": str(self.retired_dir),
        }


def _signed_line(out: Output, verb: str, signed: tuple[str, ...], commit: str | None) -> None:
    names = ", ".join(f.rsplit("/", 1)[-1] for f in signed) or "nothing to sign"
    out.success(f"{verb}: {names}" + (f" (commit {commit[:12]})" if commit else ""))


def render_sign(out: Output, report: SignReport) -> None:
    _signed_line(out, "registry sign", report.signed, report.commit)


def render_rotate(out: Output, report: RotateReport) -> None:
    _signed_line(out, "registry keys rotate", report.signed, report.commit)
    out.info(f"  new {report.role} keys: {', '.join(report.keyids)}")
    out.info(f"  {plural(report.retired_files, 'old key file')} moved to {report.retired_dir}")


RegistryPathArg = Annotated[Path, typer.Argument(help="Signed registry folder (or git checkout).")]
TimestampOpt = Annotated[
    bool, typer.Option("--timestamp", help="New timestamp (a scheduled job runs this).")
]
SnapshotOpt = Annotated[bool, typer.Option("--snapshot", help="Re-sign snapshot.json.")]
BinsOpt = Annotated[
    bool, typer.Option("--bins", help="Rebuild every bin from the registry's files.")
]
TargetsOpt = Annotated[bool, typer.Option("--targets", help="Re-sign targets.json (offline key).")]


def sign_cmd(
    ctx: typer.Context,
    path: RegistryPathArg,
    timestamp: TimestampOpt = False,
    snapshot: SnapshotOpt = False,
    bins: BinsOpt = False,
    targets: TargetsOpt = False,
    keys: KeysOpt = None,
    author_name: AuthorName = None,
    author_email: AuthorEmail = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Re-sign roles of a signed registry with fresh expiries, and commit them."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)
    asked = (("timestamp", timestamp), ("snapshot", snapshot), ("bins", bins), ("targets", targets))

    def body(out: Output) -> SignReport:
        from ..signing.admin import resign, tree_targets

        roles = {r for r, on in asked if on}
        if not roles:
            raise UsageError(
                "nothing to sign", hint="pass --timestamp, --snapshot, --bins or --targets"
            )
        # what each role's new version also needs re-signed (bins -> snapshot -> timestamp)
        needed = set(roles) | {"timestamp"}
        if roles & {"bins", "targets"}:
            needed.add("snapshot")
        with _checkout(path, author_name, author_email) as (git, author):
            repo, _ = _open(path, keys, tuple(needed))
            resign(repo, roles, tree_targets(path) if "bins" in roles else None)
            files = dict(repo.out)
            commit = _commit(path, git, author, files, f"Sign {', '.join(sorted(roles))}")
        expires = {r: repo.expires(r).isoformat() for r in sorted(needed)}
        return SignReport(path, tuple(sorted(files)), commit, expires)

    run(app_ctx, body, render_sign)


def rotate_cmd(
    ctx: typer.Context,
    role: Annotated[str, typer.Argument(help=f"One of {', '.join(ROLES)}.")],
    path: RegistryPathArg,
    threshold: Annotated[
        int | None, typer.Option("--threshold", help="Keys the role needs from now on.")
    ] = None,
    keys: KeysOpt = None,
    author_name: AuthorName = None,
    author_email: AuthorEmail = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """New keys for ROLE (a new root signed by the current root's threshold); the old
    keys move to the keys folder's retired/."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> RotateReport:
        from ..signing import keys as keymod
        from ..signing.admin import rotate

        if role not in ROLES:
            raise UsageError(f"unknown role {role!r}", hint=f"one of {', '.join(ROLES)}")
        if threshold is not None and not 1 <= threshold <= 16:
            raise UsageError("--threshold: a whole number from 1 to 16")
        with _checkout(path, author_name, author_email) as (git, author):
            repo, keys_dir = _open(path, keys, ROLES)
            keymod.retired_dir(keys_dir)  # before anything is written or committed
            written = rotate(repo, role, threshold, keys_dir)
            files = dict(repo.out)
            try:
                commit = _commit(path, git, author, files, f"Rotate the {role} keys")
            except (RegistryChangedError, BusyError):
                for key in written.files:  # refused before the commit: never used
                    key.unlink(missing_ok=True)
                raise
            retired = keymod.retire(keys_dir, role, written.replaced)
        return RotateReport(
            path,
            tuple(sorted(files)),
            commit,
            role,
            tuple(written.keyids[role]),
            tuple(written.replaced),
            len(retired),
            keys_dir / "retired",
        )

    run(app_ctx, body, render_rotate)


def keys_list_cmd(
    ctx: typer.Context,
    path: RegistryPathArg,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Key ids (sha256 fingerprints), thresholds and expiries of every role."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> KeyTable:
        from ..signing.repo import key_table

        return key_table(_open(path, None, ())[0])

    def text(out: Output, table: KeyTable) -> None:
        for row in table.roles:
            out.stdout(f"{row.role}\t{row.threshold}\t{' '.join(row.keyids)}")

    run(app_ctx, body, text)


def register_into(registry_app: typer.Typer) -> None:
    registry_app.command("sign")(sign_cmd)
    keys_app = typer.Typer(help="Keys of a signed registry.", no_args_is_help=True)
    registry_app.add_typer(keys_app, name="keys")
    keys_app.command("rotate")(rotate_cmd)
    keys_app.command("list")(keys_list_cmd)
