"""The root options (`ontoskills [OPTIONS] VERB ...`): the callback every run goes through,
which turns them into the `AppContext` the verbs read. `cli.build_app` registers it; cli.py
keeps the plain lists of these options (`_VALUE_OPTIONS`, `_FLAGS`) that pick the verb to
import before typer is loaded, which tests/cli/test_imports.py holds to this callback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .. import __version__
from ._context import AppContext


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"ontoskills {__version__}\n")
        raise typer.Exit(0)


# ONTOSKILLS_HOME / ONTOSKILLS_LOCKFILE move the global home (paths.Home.resolve); only the
# flags turn project discovery off (cargo: CARGO_HOME is not the project)
HomeOpt = Annotated[
    str | None,
    typer.Option("--home", help="Home folder (no project discovery; env ONTOSKILLS_HOME)."),
]
LockfileOpt = Annotated[
    str | None,
    typer.Option("--lockfile", help="Lockfile path (no project discovery)."),
]
ProjectOpt = Annotated[
    str | None,
    typer.Option(
        "--project",
        metavar="DIR",
        help="Use the project found from DIR (ontoskills.toml) instead of the cwd.",
    ),
]
GlobalOpt = Annotated[
    bool,
    typer.Option("-g", "--global", help="Use the global home, ignoring any project."),
]
RegistryOpt = Annotated[
    str | None,
    typer.Option(
        "--registry",
        help="Use this registry (name, URL or path) instead of the configured ones.",
    ),
]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="Use only the cache.")]
InsecureHttpOpt = Annotated[
    bool, typer.Option("--allow-insecure-http", help="Allow plain http:// registries.")
]
RequireSignedOpt = Annotated[
    bool,
    typer.Option("--require-signed", help="Refuse registries without signed (TUF) metadata."),
]
RootJsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout.")]
RootQuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Less output.")]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="Disable colors.")]
VersionOpt = Annotated[
    bool,
    typer.Option("--version", callback=_version, is_eager=True, help="Show version."),
]


def root(
    ctx: typer.Context,
    home: HomeOpt = None,
    lockfile: LockfileOpt = None,
    project: ProjectOpt = None,
    global_home: GlobalOpt = False,
    registry: RegistryOpt = None,
    offline: OfflineOpt = False,
    allow_insecure_http: InsecureHttpOpt = False,
    require_signed: RequireSignedOpt = False,
    json: RootJsonOpt = False,
    quiet: RootQuietOpt = False,
    no_color: NoColorOpt = False,
    version: VersionOpt = False,
) -> None:
    ctx.obj = AppContext(
        home_arg=home,
        lockfile_arg=lockfile,
        project_arg=project,
        global_home=global_home,
        registry_arg=registry,
        offline=offline,
        allow_insecure_http=allow_insecure_http,
        require_signed=require_signed,
        json=json,
        quiet=quiet,
        no_color=no_color,
    )
