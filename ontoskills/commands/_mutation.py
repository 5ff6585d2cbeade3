"""The one runner of every mutating verb (install, ci, update, remove, enable/disable) and the
text it renders: the verb builds the domain call, this runs it with a progress reporter,
warms the search index where the verb fetched, and renders the `Report`."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import OntoskillsError
from ..install.mutation import Change, Report
from ..install.session import Session
from ..progress import Reporter
from ..words import plural
from ._context import AppContext
from ._output import Output, run


def render_report(out: Output, report: Report) -> None:
    """The text of every mutating verb (its warnings are already on stderr)."""
    toggled = {"enable": "enabled", "disable": "disabled"}.get(report.command)
    for c in report.changes:
        if c.action == "unchanged" and toggled:  # enable/disable of a skill already so
            out.info(f"  {c.package_id}: {', '.join(c.skills)} already {toggled}")
        elif c.action == "unchanged":
            out.info(f"  {c.package_id} {c.version} already up to date")
        elif c.action == "removed":
            out.success(f"removed {c.package_id}")
        elif c.action in ("enabled", "disabled"):
            out.success(f"{c.action} {c.package_id}: {', '.join(c.skills)}")
        else:
            prev = (
                f" (was {c.previous_version})"
                if c.previous_version and c.previous_version != c.version
                else ""
            )
            out.success(
                f"{c.action} {c.package_id} {c.version}{prev} [{c.trust_tier}] "
                f"{plural(c.files, 'file')}, {plural(len(c.skills), 'skill')}"
            )
            _render_disabled(out, c)


def _render_disabled(out: Output, c: Change) -> None:
    """The installed skills a change leaves unserved: opt-in ones (the package ships them
    off) and the ones the user disabled, each called what it is."""
    if not c.disabled:
        return
    of = f"of {plural(len(c.skills), 'skill')}"  # "1 of 3 skills", "1 of 1 skill"
    unserved = "not served by search or the MCP server"
    opt_in = [s for s in c.disabled if s in c.opt_in]
    off = [s for s in c.disabled if s not in c.opt_in]
    if opt_in:
        out.info(
            f"  {len(opt_in)} {of} installed but disabled (opt-in, {unserved}): {', '.join(opt_in)}"
        )
    if off:
        out.info(f"  {len(off)} {of} disabled ({unserved}): {', '.join(off)}")
    out.info(f"  serve {'them' if len(c.disabled) > 1 else 'it'} with: {c.enable}")


def run_mutation(
    app: AppContext, action: Callable[[Session], Report], *, warm: bool = False
) -> None:
    """Run a mutating verb's domain call with a progress reporter and render its report;
    `warm`: then build the search index (install, ci, update: the verbs that fetch)."""

    def body(out: Output) -> Report:
        with out.reporter() as rep:
            report = action(app.session(rep))
            if warm:
                warm_search_index(app, report, rep)
            return report

    run(app, body, render_report)


def warm_search_index(app: AppContext, report: Report, rep: Reporter) -> None:
    """Build the search index now when the home has an encoder and the tree changed.

    Its first build encodes every skill's description (seconds per hundred skills: 18 s for
    the 626 of the full registry), and without this the first `search`, or the first MCP
    call of a server an agent just started, paid for it. A failure here loses nothing (the
    index is derived data; the next search builds it), so it is a warning, not an error.
    """
    if not report.lock_changed and all(c.action == "unchanged" for c in report.changes):
        return
    if not report.embeddings:
        return
    try:
        from ..search.service import SkillService  # numpy, pyoxigraph: only on this path

        rep.stage("indexing the installed skills for search")
        SkillService(app.home, app.lockfile, app.config).refresh()
    except OntoskillsError as exc:
        rep.warn(f"search index not built now ({exc.message}); the first search builds it")
