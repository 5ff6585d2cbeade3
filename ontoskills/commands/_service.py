"""The search service as the read-only verbs open it (search, show, serve) and the problems
they report on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog.verify import VerifyMode
from ..words import plural
from ._context import AppContext
from ._output import Output

if TYPE_CHECKING:
    from ..search.service import SkillService

MAX_PROBLEMS_SHOWN = 10


def open_service(app: AppContext, verify: VerifyMode, out: Output) -> SkillService:
    """The service; building its index (rather than reading the snapshot back) says so on
    stderr, as a bar on a terminal, a line otherwise, nothing under --quiet or --json."""
    from ..search.service import SkillService  # numpy, pyoxigraph: only when a verb opens it

    with out.reporter() as rep:
        return SkillService(
            app.home, app.lockfile, app.session_config, verify=verify, reporter=rep
        )


def report_problems(out: Output, service: SkillService) -> None:
    """Files that failed verification are not served; say so on stderr."""
    problems = service.problems
    for p in problems[:MAX_PROBLEMS_SHOWN]:
        out.warn(f"not served: {p}")
    if len(problems) > MAX_PROBLEMS_SHOWN:
        out.warn(f"... and {plural(len(problems) - MAX_PROBLEMS_SHOWN, 'more problem')}")
    if problems:
        # doctor names the repair per package (`update --force PKG`, which reads the lock's
        # registry); `install --force` failed for a package from an ad-hoc --registry
        out.info("hint: `ontoskills doctor` explains and names the command that repairs it")
