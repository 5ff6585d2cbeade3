"""The typer application: global flags (declared in commands/_root.py) and the list of verbs.

Each verb (or verb group) is a module under commands/ exposing `register(app)`. A run
imports only the module of the verb it names (every module for `--help`, a bare
`ontoskills` or an unknown verb), and a bare `--version` imports no command at all: `serve`
and `search` must not pay for the install stack, rich tables or the other verbs' imports
(docs/PERFORMANCE.md). `app` (the whole CLI, for tests and docs) is built on first access.
"""

import importlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import __version__

if TYPE_CHECKING:
    import typer

# Order here is the order in `--help`.
COMMAND_MODULES: tuple[str, ...] = (
    "project",
    "install",
    "ci",
    "update",
    "remove",
    "toggle",
    "listing",
    "outdated",
    "tree",
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
    "link",
    "mirror",
)
# verb -> the module registering it (tests/cli/test_imports.py holds this to `register`).
VERBS: dict[str, str] = {
    "init": "project",
    "add": "project",
    "sync": "project",
    "install": "install",
    "ci": "ci",
    "update": "update",
    "remove": "remove",
    "enable": "toggle",
    "disable": "toggle",
    "list": "listing",
    "info": "listing",
    "outdated": "outdated",
    "tree": "tree",
    "why": "tree",
    "doctor": "doctor",
    "cache": "cache",
    "lock": "lock",
    "registry": "registry",
    "search": "search",
    "show": "show",
    "export-embeddings": "export_embeddings",
    "serve": "serve",
    "mcp-config": "mcp_config",
    "pack": "pack",
    "publish": "publish",
    "link": "link",
    "unlink": "link",
    "mirror": "mirror",
}
# The root options (commands/_root.py declares them): which take a value, which are flags.
_VALUE_OPTIONS = ("--home", "--lockfile", "--registry", "--project")
_FLAGS = (
    "--offline",
    "--allow-insecure-http",
    "--require-signed",
    "--json",
    "--quiet",
    "-q",
    "--no-color",
    "-g",
    "--global",
)


def build_app(modules: Iterable[str] = COMMAND_MODULES) -> "typer.Typer":
    """The CLI with the verbs of `modules` registered (the root options always)."""
    import typer

    from .commands._root import root

    app = typer.Typer(
        name="ontoskills",
        help="Install, search, serve and publish OntoSkills packages.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(root)
    for name in modules:
        importlib.import_module(f"ontoskills.commands.{name}").register(app)
    return app


def parse_leading(argv: list[str]) -> tuple[str | None, list[str], bool]:
    """(the verb, the root options before it, whether every one of them is known)."""
    options: list[str] = []
    known = True
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg in _VALUE_OPTIONS:
            options += argv[i : i + 2]
            i += 2
            continue
        if not arg.startswith("-"):
            return arg, options, known
        name = arg.split("=", 1)[0]
        known = known and (
            arg in _FLAGS or arg in ("--version", "-h", "--help") or name in _VALUE_OPTIONS
        )
        options.append(arg)
        i += 1
    return None, options, known


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a run needs: the verb's, or all of them (help, unknown verb)."""
    verb, _, _ = parse_leading(argv)
    module = VERBS.get(verb or "")
    return (module,) if module is not None else COMMAND_MODULES


def _bare_version(argv: list[str]) -> bool:
    """`ontoskills [root options] --version` and nothing typer would refuse or act on first."""
    verb, options, known = parse_leading(argv)
    return (
        verb is None
        and known
        and "--version" in options
        and not {"-h", "--help"} & set(options[: options.index("--version")])
        and len(options) == len(argv)
    )


def _env_ok() -> bool:
    """A malformed numeric ONTOSKILLS_* variable is exit 2 even for --version: the entry
    reports it, with the error contract."""
    from . import envvars
    from .errors import OntoskillsError

    try:
        envvars.check_all()
    except OntoskillsError:
        return False
    return True


def __getattr__(name: str) -> Any:
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(name)


def main() -> None:
    argv = sys.argv[1:]
    if _bare_version(argv) and _env_ok():
        try:
            sys.stdout.write(f"ontoskills {__version__}\n")
            sys.stdout.flush()
        except OSError:  # the reader went away: quietly, with the documented exit code
            from .commands._output import stdout_closed

            sys.exit(stdout_closed())
        sys.exit(0)
    # The entry keeps the error contract (one line + hint, JSON under --json) for usage
    # errors and OS errors too, which typer's standalone mode does not.
    from .commands._entry import main as entry

    entry(build_app(modules_for(argv)))
