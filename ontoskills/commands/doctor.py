"""`ontoskills doctor`: verify the installed tree against the lockfile."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import EXIT_INTEGRITY, EXIT_LOCK, EXIT_OTHER
from ..install.queries import doctor
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

        def body(out: Output) -> int:
            rep = doctor(app_ctx.session(), fast=fast)
            if app_ctx.json:
                out.json(
                    {
                        "healthy": rep.healthy,
                        "lock_error": rep.lock_error,
                        "packages": {
                            pid: {**d.__dict__, "clean": d.clean} for pid, d in rep.packages.items()
                        },
                        "unmanaged": rep.unmanaged,
                        "staging": rep.staging,
                        "stale_lock_owner": rep.stale_owner,
                        "problems": rep.problems,
                        "model_drift": rep.model_drift,
                        "planted_links": rep.planted_links,
                    }
                )
            else:
                for link in rep.planted_links:
                    out.warn(
                        f"{link} is a symlink where ontoskills keeps a folder; every command "
                        "refuses to write through it: remove it"
                    )
                if rep.lock_error:
                    out.warn(rep.lock_error)
                for pid, drift in rep.packages.items():
                    if drift.clean:
                        out.success(f"{pid}: all files match the lock")
                    else:
                        out.warn(f"{pid}: {describe(drift)}")
                for pid in rep.unmanaged:
                    out.warn(
                        f"{pid}: installed folder not in the lock (`ontoskills ci` removes it)"
                    )
                for name in rep.staging:
                    out.warn(f"leftover staging {name}: the next install/remove repairs it")
                if rep.stale_owner:
                    out.warn(f"stale lock owner record (pid {rep.stale_owner.get('pid')}, gone)")
                for problem in rep.model_drift + rep.problems:
                    out.warn(problem)
                if rep.healthy:
                    out.success("healthy")
            if rep.drifted:
                return EXIT_INTEGRITY
            if rep.lock_error:  # a malformed lock is exit 3 everywhere (docs/CLI.md)
                return EXIT_LOCK
            return 0 if rep.healthy else EXIT_OTHER

        code = run(app_ctx, body)
        raise typer.Exit(code)
