"""The process entry point: every way out of the CLI keeps the error contract.

Typer's standalone mode prints click's multi-line usage banner, ignores `--json` for usage
errors and lets an OSError (a home that is a file, a full disk) escape as a traceback. Here
the app runs with standalone_mode=False and each failure becomes the same two lines
(`error:` + `hint:`) on stderr, plus the JSON error document on stdout under `--json`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import NoReturn

import typer

from .. import envvars
from ..errors import (
    EXIT_INTERRUPTED,
    EXIT_OTHER,
    EXIT_USAGE,
    OntoskillsError,
    from_os_error,
)
from ._context import AppContext
from ._output import Output, StdoutClosed, render_error, stdout_closed

try:  # typer >= 0.20 vendors click
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as click_exc  # type: ignore[no-redef]

PROG_NAME = "ontoskills"
DEBUG_ENV = "ONTOSKILLS_DEBUG"


def _flags(argv: list[str]) -> AppContext:
    """--json/--no-color as typed, for errors raised before any command ran."""
    opts = argv[: argv.index("--")] if "--" in argv else argv
    return AppContext(json="--json" in opts, no_color="--no-color" in opts)


# Verbs people type from other package managers (npm, pip, apt, brew) -> ours. Click's own
# suggestion is the closest spelling (`uninstall` -> `install`: the opposite of the intent).
OTHER_NAMES = {
    "uninstall": "remove",
    "rm": "remove",
    "un": "remove",
    "i": "install",
    "ls": "list",
    "find": "search",
    "view": "show",
    "upgrade": "update",
    "up": "update",
    "verify": "doctor",
}
_NO_SUCH_COMMAND = re.compile(r"^No such command '([^']*)'\.")


def _usage_error(exc: click_exc.UsageError) -> OntoskillsError:
    path = exc.ctx.command_path if exc.ctx is not None else PROG_NAME
    message = " ".join(exc.format_message().split())
    # typer converts choices through pydantic, whose wording leaks into click's message
    message = message.replace(": Value error, ", ": ")
    hint = f"see `{path} --help`"
    unknown = _NO_SUCH_COMMAND.match(message)
    listing = getattr(exc.ctx.command, "list_commands", None) if exc.ctx is not None else None
    known: list[str] = list(listing(exc.ctx)) if callable(listing) else []  # a group's verbs
    if unknown and (ours := OTHER_NAMES.get(unknown[1])) in known:
        message, hint = unknown[0], f"did you mean `{path} {ours}`? (see `{path} --help`)"
    # every other error of ours starts lowercase ("error: no lockfile at ..."): click's too
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    err = OntoskillsError(message, hint=hint)
    err.exit_code = EXIT_USAGE
    return err


def _fail(argv: list[str], err: OntoskillsError) -> NoReturn:
    # stdout/stderr may be closed: the exit code still says what happened
    with contextlib.suppress(OSError, ValueError, AttributeError, StdoutClosed):
        render_error(Output(_flags(argv)), err)
    sys.exit(err.exit_code)


def main(app: typer.Typer, args: list[str] | None = None) -> NoReturn:
    argv = list(sys.argv[1:] if args is None else args)
    command = typer.main.get_command(app)
    try:
        # A malformed numeric ONTOSKILLS_* variable is exit 2 for every command, --version
        # and --help included, before anything reads it (never a traceback, never ignored).
        envvars.check_all()
        code = command.main(args=argv, prog_name=PROG_NAME, standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:  # bare `ontoskills`: help, exit 2 (as click)
        exc.show()
        sys.exit(EXIT_USAGE)
    except click_exc.UsageError as exc:
        _fail(argv, _usage_error(exc))
    except click_exc.ClickException as exc:
        err = OntoskillsError(" ".join(exc.format_message().split()))
        err.exit_code = exc.exit_code
        _fail(argv, err)
    except (typer.Abort, KeyboardInterrupt) as exc:
        if isinstance(exc.__cause__, EOFError):
            _fail(argv, OntoskillsError("input ended (EOF) before the command finished"))
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except StdoutClosed:  # e.g. a --json error document for a reader that went away
        sys.exit(stdout_closed())
    except OntoskillsError as exc:  # raised outside `run` (e.g. while building a context)
        _fail(argv, exc)
    except OSError as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        _fail(argv, from_os_error(exc))
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        err = OntoskillsError(
            f"internal error: {exc.__class__.__name__}: {' '.join(str(exc).split())}",
            hint=f"this is a bug: re-run with {DEBUG_ENV}=1 for the traceback and report it",
        )
        err.exit_code = EXIT_OTHER
        _fail(argv, err)
    sys.exit(code if isinstance(code, int) else 0)
