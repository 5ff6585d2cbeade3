"""`init`, `add`, `sync`: the project verbs (issue 24; docs/CLI.md "Projects").

`init` writes a commented `ontoskills.toml` and ignores `.ontoskills/` in `.gitignore`;
`add` declares packages in the nearest manifest and syncs; `sync` makes the lock and the
project's tree match the manifests (commands/_project.py, install/sync.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import UsageError
from ..install.options import InstallOptions
from ..project import MANIFEST_NAME
from ..safety import is_valid_name
from . import _context
from ._context import AppContext, JsonOpt, QuietOpt
from ._options import EmbeddingsOpt, MinTrustOpt, StrictOpt
from ._output import Output, run
from ._project import edit_manifest, run_sync, wanted_specs


@dataclass(frozen=True)
class Initialized:
    manifest: Path
    written: tuple[Path, ...]
    workspace: Path | None = None  # the workspace root when the folder is one of its members

    def to_json(self) -> dict[str, Any]:
        return {
            "manifest": str(self.manifest),
            "written": [str(p) for p in self.written],
            "workspace": str(self.workspace) if self.workspace else None,
        }


def _render_init(out: Output, done: Initialized) -> None:
    for path in done.written:
        out.success(f"wrote {path}")
    if done.workspace is not None:  # a member: the root's lock and tree serve it
        out.info(
            f"this folder is a member of the workspace at {done.workspace}: its lock and "
            "tree serve this member (no .gitignore or lock here)"
        )
        out.info(
            "next: `ontoskills add author/pkg` here, then commit ontoskills.toml and the "
            f"workspace's {done.workspace / 'ontoskills.lock'}"
        )
        return
    out.info("next: `ontoskills add author/pkg`, then commit ontoskills.toml and ontoskills.lock")


def init_cmd(
    ctx: typer.Context,
    folder: Annotated[
        Path | None, typer.Argument(help="Project folder (default: the current folder).")
    ] = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Start a project here: a commented ontoskills.toml, .ontoskills/ in .gitignore."""
    from ..projectedit import init

    app = _context.get(ctx, json=json, quiet=quiet)
    where = Path(folder or app.project_arg or Path.cwd()).absolute()

    def body(out: Output) -> Initialized:
        if not where.is_dir():
            raise UsageError(f"{where} is not a folder", hint="create it first")
        written, workspace = init(where)
        return Initialized(where / MANIFEST_NAME, tuple(written), workspace)

    run(app, body, _render_init)


def _in_project(app: AppContext, verb: str) -> None:
    if app.project is None:
        raise UsageError(
            f"`{verb}` works on a project, and no {MANIFEST_NAME} was found here or above",
            hint="create one with `ontoskills init` (or use `ontoskills install` for the "
            "global home)",
        )


def add_cmd(
    ctx: typer.Context,
    specs: Annotated[
        list[str],
        typer.Argument(
            help="author/pkg or author/pkg/skill; an Agent Skills repository: "
            "github:owner/repo[/skill][#ref], https://host/owner/repo(.git), a path"
        ),
    ],
    registry: Annotated[
        str | None,
        typer.Option("--registry", help="Declare the registry (a name) the packages come from."),
    ] = None,
    skill: Annotated[
        list[str] | None, typer.Option("--skill", help="Only this skill (repeatable).")
    ] = None,
    with_embeddings: EmbeddingsOpt = False,
    min_trust: MinTrustOpt = None,
    strict: StrictOpt = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Declare packages in ontoskills.toml, then sync (the manifest is kept if it fails)."""
    app = _context.get(ctx, json=json, quiet=quiet)
    _in_project(app, "add")
    if registry is not None and registry not in app.desired().registries:
        raise UsageError(
            f"--registry {registry!r} is not declared",
            hint="declare it under [registries.NAME] in ontoskills.toml, or with "
            "`ontoskills registry add`",
        )
    wanted = wanted_specs(app, specs, registry)
    if skill:
        if len(wanted) != 1:
            raise UsageError("--skill names skills of one package", hint="add packages one by one")
        bad = [name for name in skill if not is_valid_name(name)]
        if bad:
            raise UsageError(f"--skill {bad[0]!r} is not a skill name")
        named = set(wanted[0].skills) if wanted[0].skills else set()
        wanted = [replace(wanted[0], skills=tuple(sorted(named | set(skill))))]

    opts = InstallOptions(with_embeddings=with_embeddings, min_trust=min_trust, strict=strict)
    run_sync(app, opts, edit=edit_manifest(wanted))


def sync_cmd(
    ctx: typer.Context,
    locked: Annotated[
        bool, typer.Option("--locked", help="Fail (exit 3) if the lock would change.")
    ] = False,
    frozen: Annotated[
        bool, typer.Option("--frozen", help="Install the lock as written; ignore the manifest.")
    ] = False,
    min_trust: MinTrustOpt = None,
    strict: StrictOpt = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Make ontoskills.lock and .ontoskills/ match ontoskills.toml."""
    app = _context.get(ctx, json=json, quiet=quiet)
    _in_project(app, "sync")
    if locked and frozen:
        raise UsageError("--locked and --frozen exclude each other", hint="pick one")
    opts = InstallOptions(min_trust=min_trust, strict=strict, locked=locked, frozen=frozen)
    run_sync(app, opts)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("add")(add_cmd)
    app.command("sync")(sync_cmd)
