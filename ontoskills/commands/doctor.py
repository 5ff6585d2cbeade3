"""`ontoskills doctor`: verify the installed tree against the lockfile."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import EXIT_INTEGRITY, EXIT_LOCK, EXIT_OTHER
from ..install.queries import DoctorReport, doctor
from ..install.state import describe
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_cmd(
        ctx: typer.Context,
        fast: Annotated[
            bool, typer.Option("--fast", help="Compare sizes only, no hashing.")
        ] = False,
        json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Re-hash every installed file; report drift, leftover staging and stale locks.

        Exit 0 when healthy, 4 when installed files differ from the lock, 3 when the lock is
        unreadable, 1 for other problems.
        """
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> DoctorReport:
            with out.reporter() as rep:
                report = doctor(app_ctx.session(rep), fast=fast)
            if report.drifted:
                out.result.exit_code = EXIT_INTEGRITY
            elif report.lock_error:  # a malformed lock is exit 3 everywhere (docs/CLI.md)
                out.result.exit_code = EXIT_LOCK
            elif not report.healthy:
                out.result.exit_code = EXIT_OTHER
            return report

        run(app_ctx, body, render)


def render(out: Output, rep: DoctorReport) -> None:
    for link in rep.planted_links:
        out.warn(
            f"{link} is a symlink where ontoskills keeps a folder; every command refuses to "
            "write through it: remove it"
        )
    if rep.lock_error:
        out.warn(rep.lock_error)
    for pid, drift in rep.packages.items():
        if drift.clean:
            out.success(f"{pid}: all files match the lock")
        else:
            out.warn(f"{pid}: {describe(drift)}")
    for pid in rep.unmanaged:
        out.warn(f"{pid}: installed folder not in the lock (`ontoskills ci` removes it)")
    for name in rep.staging:
        out.warn(f"leftover staging {name}: the next install/remove repairs it")
    if rep.stale_owner:
        out.warn(f"stale lock owner record (pid {rep.stale_owner.get('pid')}, gone)")
    for problem in rep.model_drift + rep.problems:
        out.warn(problem)
    for issue in rep.store.issues:
        out.warn(issue.text())
    if rep.store.relinkable:
        out.info(
            f"{rep.store.relinkable} files are copies the store could share (installed "
            "before it, or after `cache clean`): `ontoskills ci` links them (it reinstalls "
            "every locked package from the lock: copy any edits in them first)"
        )
    _next_step(out, rep)
    if rep.healthy:
        out.success("healthy")


def _next_step(out: Output, rep: DoctorReport) -> None:
    """Drift ended the report with its warnings alone (exit 4): say how to repair it, and
    whose edits that repair overwrites, since the user cannot tell from the exit code."""
    damaged = sorted(pid for pid, drift in rep.packages.items() if not drift.clean)
    if not damaged:
        return
    edited = [pid for pid in damaged if rep.packages[pid].user_changes]
    # update, not install: it reads each package's locked registry (in a project too), where
    # `install PKG` resolves from the configured ones, which an ad-hoc --registry never joined
    line = f"next: `ontoskills update --force {' '.join(damaged)}` refetches them from their "
    line += "registry"
    if edited:
        line += f" (over your edits in {', '.join(edited)}: copy them first)"
    out.info(line)
