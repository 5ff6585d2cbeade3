"""Rendering: JSON on stdout, human text and progress on stderr (uv/cargo contract)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # a live bar only on a terminal: imported when one starts
    from rich.progress import Progress

from ..errors import EXIT_INTERRUPTED, OntoskillsError, from_os_error
from ..redact import redact_text
from ._context import AppContext, in_ci
from ._result import CommandResult, Reported

R = TypeVar("R", bound="Reported | None")
# `ontoskills list --json | head -0`: the reader went away. Like git (killed by SIGPIPE, which
# a shell reports as 128 + 13), end quietly with that status: not an error to print, and a
# `set -o pipefail` script still sees that our output was not all read.
EXIT_STDOUT_CLOSED = 141

# Text from registries, skills and the user's files reaches the terminal through the writers
# below. A control character in it (ESC starting a terminal sequence that retitles the window
# or hides what follows, a carriage return overwriting the line, C1 controls) is shown as its
# escape, never sent raw. --json output needs none of this: json.dumps escapes controls.
_CONTROLS = {
    c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0))
}


def printable(text: str) -> str:
    """`text` with every control character but newline and tab written as `\\xNN`."""
    return text.translate(_CONTROLS)


def shown(text: str) -> str:
    """`text` for a rich console line: URL credentials out (redact.py: `cloning <url>`,
    a warning naming a redirect target), controls escaped, then rich's markup escaped."""
    return escape(printable(redact_text(text)))


class StdoutClosed(Exception):
    """The reader of stdout (or stderr) closed the pipe; raised by our writers."""


def stdout_closed() -> int:
    """Point fds 1 and 2 at /dev/null so no later write or the interpreter's final flush
    fails again (Python would print "Exception ignored ... BrokenPipeError" and exit 120, and
    rich would exit 1); returns the exit status."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(devnull, stream.fileno())
        os.close(devnull)
    return EXIT_STDOUT_CLOSED


# Wide enough for any row we print (ids are bounded by safety.py's name rules); rich pads a
# table only to its content, not to this width.
UNCUT_WIDTH = 100_000


class _Console(Console):
    def on_broken_pipe(self) -> None:  # rich's default: dup2 + SystemExit(1)
        self.quiet = True
        raise StdoutClosed()


@contextmanager
def writing_stdout() -> Iterator[None]:
    try:
        yield
        sys.stdout.flush()  # surface EPIPE here, not at interpreter exit
    except BrokenPipeError:
        raise StdoutClosed() from None


def color_off(app: AppContext) -> bool:
    """--no-color or NO_COLOR (any value, as no-color.org says)."""
    return app.no_color or "NO_COLOR" in os.environ


def console(app: AppContext, *, stderr: bool) -> Console:
    # rich's no_color only drops colours and keeps bold/dim escapes; no colour system at all
    # means no ANSI escape of any kind, which is what NO_COLOR users (and log parsers) expect.
    kwargs: dict[str, Any] = {"color_system": None} if color_off(app) else {}
    out = _Console(stderr=stderr, highlight=False, soft_wrap=True, **kwargs)
    if not out.is_terminal:
        # rich sizes a console that is not a terminal at 80 columns (or $COLUMNS) and cuts
        # table cells to fit with "…": a piped `list` would hand scripts truncated ids. Output
        # for a pipe or a file is never cut (as git and uv do); a terminal keeps its width.
        out.width = UNCUT_WIDTH
    return out


def stderr_console(app: AppContext) -> Console:
    return console(app, stderr=True)


class Output:
    """One command's output: its result (data, warnings, error) and the two renderers."""

    def __init__(self, app: AppContext) -> None:
        self.app = app
        self.err = stderr_console(app)
        self.result = CommandResult()

    # human-facing lines -------------------------------------------------------------
    def info(self, message: str) -> None:
        if not self.app.quiet:
            self.err.print(shown(message))

    def success(self, message: str) -> None:
        if not self.app.quiet:
            self.err.print(f"[green]✓[/green] {shown(message)}")

    def warn(self, message: str) -> None:
        """Every warning of the command comes here (the domain's through the reporter): on
        stderr when it happens, and into the result, so `--json` lists it too. Once each."""
        if self.result.warn(redact_text(message)):
            self.err.print(f"[yellow]warning:[/yellow] {shown(message)}")

    # machine-facing ---------------------------------------------------------------
    def json(self) -> None:
        """The result as the one JSON document on stdout."""
        doc = self.result.to_json()
        with writing_stdout():
            sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n")

    def stdout(self, text: str) -> None:
        with writing_stdout():
            text = printable(text)
            sys.stdout.write(text if text.endswith("\n") else text + "\n")

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
        """A table on stdout, plain when stdout is not a terminal. Cells are data (names and
        versions from registries), never markup: `[/x]` in a version is shown, not parsed."""
        from rich.table import Table

        table = Table(box=None, pad_edge=False)
        for col in columns:
            table.add_column(col)
        for row in rows:
            table.add_row(*(shown(cell) for cell in row))
        with writing_stdout():
            console(self.app, stderr=False).print(table)

    # progress ---------------------------------------------------------------------
    @contextmanager
    def reporter(self) -> Iterator[RichReporter]:
        rep = RichReporter(self)
        try:
            yield rep
        finally:
            rep.close()


class RichReporter:
    """Reporter (see ontoskills.progress) drawing a rich progress bar on stderr."""

    def __init__(self, out: Output) -> None:
        self.out = out
        # Bars only for a person watching a terminal: never under --quiet or CI, and not
        # with colour off either (a live bar needs cursor escapes; stages become plain lines).
        self.show = (
            not out.app.quiet and out.err.is_terminal and not in_ci() and not color_off(out.app)
        )
        self._progress: Progress | None = None
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        if not self.show:
            if not self.out.app.quiet and not self.out.app.json:
                self.out.info(name)
            return
        if self._progress is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.out.err,
                transient=True,
            )
            self._progress.start()
        if self._task is not None:
            self._progress.update(self._task, visible=False)
        self._task = self._progress.add_task(shown(name), total=total)

    def advance(self, n: int = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def note(self, message: str) -> None:
        if self._progress is not None:
            self._progress.console.print(shown(message))
        else:
            self.out.info(message)

    def warn(self, message: str) -> None:
        self.out.warn(message)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def run(
    app: AppContext,
    body: Callable[[Output], R],
    text: Callable[[Output, R], None] | None = None,
) -> None:
    """Run a command: `body` calls the domain and returns what the verb reports; `text`
    renders it for a person (JSON is the result's own `to_json()`). Domain errors become a
    one-line message (+ the JSON error document) and an exit code."""
    out = Output(app)
    try:
        data = body(out)
        out.result.data = data
        if app.json:
            if data is not None:
                out.json()
        elif text is not None:
            text(out, data)
    except StdoutClosed:
        raise typer.Exit(stdout_closed()) from None
    except OntoskillsError as exc:
        render_error(out, exc)
    except OSError as exc:  # disk full, read-only home: the transaction already rolled back
        render_error(out, from_os_error(exc))
    except KeyboardInterrupt:
        out.err.print("[red]interrupted[/red]: nothing was changed that was not finished")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if out.result.exit_code:
        raise typer.Exit(out.result.exit_code)


def render_error(out: Output, exc: OntoskillsError) -> None:
    out.result.fail(exc)
    out.err.print(f"[red]error:[/red] {shown(exc.message)}")
    if exc.hint:
        out.err.print(f"[dim]hint:[/dim] {shown(exc.hint)}")
    if out.app.json:
        # A failing --json run still prints one document, so scripts can parse the reason
        # (and the warnings emitted before it failed).
        try:
            out.json()
        except StdoutClosed:  # the reader left; the error's own exit code still says why
            stdout_closed()
