"""`ontoskills registry sign PATH` and `registry keys rotate|list` (signed registries)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import BusyError, RegistryChangedError, UsageError
from ..signing import ROLES
from . import _context
from ._context import JsonOpt, QuietOpt
from ._options import KeysOpt
from ._output import Output, run
from ._result import Doc

if TYPE_CHECKING:
    from ..publish.gitcas import Checkout
    from ..publish.gitops import Author
    from ..signing.repo import Repo

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


def _doc(
    verb: str,
    path: Path,
    files: dict[str, bytes],
    commit: str | None,
    extra: dict[str, object],
) -> Doc:
    return Doc(
        {"command": verb, "path": str(path), "signed": sorted(files), "commit": commit, **extra}
    )


def _text(out: Output, doc: Doc) -> None:
    p = doc.payload
    names = ", ".join(f.rsplit("/", 1)[-1] for f in p["signed"]) or "nothing to sign"
    commit = p["commit"]
    out.success(f"{p['command']}: {names}" + (f" (commit {commit[:12]})" if commit else ""))
    if p["command"] == "registry keys rotate":
        out.info(f"  new {p['role']} keys: {', '.join(p['keyids'])}")
        out.info(f"  {p['retired_files']} old key file(s) moved to {p['retired_dir']}")


def register_into(registry_app: typer.Typer) -> None:
    @registry_app.command("sign")
    def sign_cmd(
        ctx: typer.Context,
        path: Annotated[Path, typer.Argument(help="Signed registry folder (or git checkout).")],
        timestamp: Annotated[
            bool, typer.Option("--timestamp", help="New timestamp (a scheduled job runs this).")
        ] = False,
        snapshot: Annotated[
            bool, typer.Option("--snapshot", help="Re-sign snapshot.json.")
        ] = False,
        bins: Annotated[
            bool, typer.Option("--bins", help="Rebuild every bin from the registry's files.")
        ] = False,
        targets: Annotated[
            bool, typer.Option("--targets", help="Re-sign targets.json (offline key).")
        ] = False,
        keys: KeysOpt = None,
        author_name: AuthorName = None,
        author_email: AuthorEmail = None,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Re-sign roles of a signed registry with fresh expiries, and commit them."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            from ..signing.admin import resign, tree_targets

            roles = {
                r
                for r, on in (
                    ("timestamp", timestamp),
                    ("snapshot", snapshot),
                    ("bins", bins),
                    ("targets", targets),
                )
                if on
            }
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
            return _doc(
                "registry sign",
                path,
                files,
                commit,
                {"expires": {r: repo.expires(r).isoformat() for r in sorted(needed)}},
            )

        run(app_ctx, body, _text)

    keys_app = typer.Typer(help="Keys of a signed registry.", no_args_is_help=True)
    registry_app.add_typer(keys_app, name="keys")

    @keys_app.command("rotate")
    def rotate_cmd(
        ctx: typer.Context,
        role: Annotated[str, typer.Argument(help=f"One of {', '.join(ROLES)}.")],
        path: Annotated[Path, typer.Argument(help="Signed registry folder (or git checkout).")],
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

        def body(out: Output) -> Doc:
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
            return _doc(
                "registry keys rotate",
                path,
                files,
                commit,
                {
                    "role": role,
                    "keyids": written.keyids[role],
                    "retired": written.replaced,
                    "retired_files": len(retired),
                    "retired_dir": str(keys_dir / "retired"),
                },
            )

        run(app_ctx, body, _text)

    @keys_app.command("list")
    def list_cmd(
        ctx: typer.Context,
        path: Annotated[Path, typer.Argument(help="Signed registry folder (or git checkout).")],
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Key ids (sha256 fingerprints), thresholds and expiries of every role."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> Doc:
            repo, _ = _open(path, None, ())
            root = repo.root.signed
            rows = [
                {
                    "role": r,
                    "keyids": list(root.roles[r].keyids),
                    "threshold": root.roles[r].threshold,
                }
                for r in ("root", "targets", "snapshot", "timestamp")
            ]
            rows.append(
                {
                    "role": "bins",
                    "keyids": list(repo.succinct.keyids),
                    "threshold": repo.succinct.threshold,
                }
            )
            return Doc(
                {"command": "registry keys list", "root_version": root.version, "roles": rows}
            )

        def text(out: Output, doc: Doc) -> None:
            for row in doc.payload["roles"]:
                out.stdout(f"{row['role']}\t{row['threshold']}\t{' '.join(row['keyids'])}")

        run(app_ctx, body, text)
