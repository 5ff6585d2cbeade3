"""The typer application: global flags and the list of verbs. Nothing else lives here.

Each verb (or verb group) is a module under commands/ exposing `register(app)`.
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated

import typer

from . import __version__
from .commands._context import AppContext
from .commands._output import writing_stdout

# Order here is the order in `--help`.
COMMAND_MODULES: tuple[str, ...] = (
    "install",
    "ci",
    "update",
    "remove",
    "toggle",
    "listing",
    "outdated",
    "doctor",
    "cache",
    "lock",
    "registry",
    "search",
    "show",
    "export_embeddings",
    "serve",
    "mcp_config",
    "pack",
    "publish",
)

app = typer.Typer(
    name="ontoskills",
    help="Install, search, serve and publish OntoSkills packages.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        with writing_stdout():  # `ontoskills --version | head -0` ends quietly (exit 141)
            sys.stdout.write(f"ontoskills {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[
        str | None, typer.Option("--home", envvar="ONTOSKILLS_HOME", help="Home folder.")
    ] = None,
    lockfile: Annotated[
        str | None,
        typer.Option("--lockfile", envvar="ONTOSKILLS_LOCKFILE", help="Lockfile path."),
    ] = None,
    registry: Annotated[
        str | None,
        typer.Option(
            "--registry",
            help="Use this registry (name, URL or path) instead of the configured ones.",
        ),
    ] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Use only the cache.")] = False,
    allow_insecure_http: Annotated[
        bool, typer.Option("--allow-insecure-http", help="Allow plain http:// registries.")
    ] = False,
    require_signed: Annotated[
        bool,
        typer.Option("--require-signed", help="Refuse registries without signed (TUF) metadata."),
    ] = False,
    json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Less output.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Disable colors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    ctx.obj = AppContext(
        home_arg=home,
        lockfile_arg=lockfile,
        registry_arg=registry,
        offline=offline,
        allow_insecure_http=allow_insecure_http,
        require_signed=require_signed,
        json=json,
        quiet=quiet,
        no_color=no_color,
    )


for _name in COMMAND_MODULES:
    importlib.import_module(f"ontoskills.commands.{_name}").register(app)


def main() -> None:
    # The entry keeps the error contract (one line + hint, JSON under --json) for usage
    # errors and OS errors too, which typer's standalone mode does not.
    from .commands._entry import main as entry

    entry(app)
