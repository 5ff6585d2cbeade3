"""The three entry points: `link`, `unlink` and `refresh` (the mutation skeleton's hook,
run after install, ci, update, remove, enable and disable commit, only when a link record
exists). Callers hold the home lock (the link verbs take it; refresh runs inside the
mutation's): this package imports nothing of install/, which imports it."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..errors import NotFoundError, OntoskillsError, UnsafePathError
from ..paths import Home
from ..progress import Reporter
from . import record as records
from .agents import AGENTS, listing_size
from .record import Link, Record, RecordError
from .sync import LinkReport, apply, check_target, plan, target_of, unlink_all
from .wanted import Catalog


def _catalog(home: Home, lockfile: Path, config: Config) -> Catalog:
    from ..search.service import SkillService  # numpy, pyoxigraph: only on these paths

    return Catalog(SkillService(home, lockfile, config))


def _record(home: Home, rep: Reporter) -> Record:
    try:
        return records.load(home)
    except RecordError as exc:
        rep.warn(f"{exc}; ignored: nothing is removed on its word, and a new one replaces it")
        return Record()


def link(
    home: Home,
    lockfile: Path,
    config: Config,
    agent: str,
    scope: str,
    base: Path,
    rep: Reporter,
) -> LinkReport:
    base = base.absolute()
    target = target_of(agent, scope, base)
    check_target(base, target)
    rec = _record(home, rep)
    catalog = _catalog(home, lockfile, config)
    for w in catalog.warnings:
        rep.warn(w)
    current = rec.find(agent, str(base), scope)
    link_ = current or Link(agent, scope, str(base))
    report = LinkReport("link", agent, scope, str(target))
    p, digests = plan(link_, catalog, report)
    if p.refused:
        more = f" (+{len(p.refused) - 1} more)" if len(p.refused) > 1 else ""
        raise UnsafePathError(
            f"{p.refused[0]}{more} exists and was not written by `ontoskills link` "
            "(or changed since it was); nothing was linked",
            hint="move it away (or unlink the other copy), then run link again",
        )
    for folder in report.left:
        rep.warn(f"{folder} changed since it was linked; left in place and forgotten")
    if current is None:
        rec.links.append(link_)
    apply(home, rec, link_, catalog, p, digests)
    _listing(agent, catalog, report, rep)
    return report


def _listing(agent: str, catalog: Catalog, report: LinkReport, rep: Reporter) -> None:
    a = AGENTS[agent]
    if a.listing_chars is None:
        return
    entries = [(w.name, w.description) for w in catalog.skills.values()]
    report.listing_chars, report.listing_budget = listing_size(a, entries), a.listing_chars
    if report.listing_chars > a.listing_chars:
        rep.warn(
            f"{len(entries)} skills linked for {a.label}: their names and descriptions take "
            f"{report.listing_chars:,} characters, over the ~{a.listing_chars:,} its skill "
            f"listing holds ({a.listing_note}); it cuts descriptions or leaves skills out. "
            f"The MCP tool scales instead (it searches, nothing is listed): "
            f"`ontoskills mcp-config --client {agent}`"
        )


def unlink(home: Home, agent: str, scope: str, base: Path, rep: Reporter) -> LinkReport:
    base = base.absolute()
    target = target_of(agent, scope, base)
    rec = _record(home, rep)
    link_ = rec.find(agent, str(base), scope)
    if link_ is None:
        raise NotFoundError(
            f"nothing is linked for {agent} in {target}",
            hint=f"`ontoskills link --agent {agent}` writes the served skills there",
        )
    check_target(base, target)
    report = LinkReport("unlink", agent, scope, str(target))
    unlink_all(home, rec, link_, report, rep)
    return report


def refresh(home: Home, lockfile: Path, config: Config, rep: Reporter) -> None:
    """Keep every linked agent folder in step with what is served now (best effort: a
    folder that is not ours, or a failure, is a warning; the verb's commit stands)."""
    if not records.exists(home):
        return
    rec = _record(home, rep)
    if not rec.links:
        return
    try:
        catalog = _catalog(home, lockfile, config)
    except OntoskillsError as exc:
        rep.warn(f"linked agent folders not refreshed: {exc.message}")
        return
    for link_ in list(rec.links):
        try:
            _refresh_one(home, rec, link_, catalog, rep)
        except (OntoskillsError, OSError) as exc:
            rep.warn(f"{link_.target} not refreshed: {exc}")


def _refresh_one(home: Home, rec: Record, link_: Link, catalog: Catalog, rep: Reporter) -> None:
    base, target = Path(link_.base), link_.target
    if not base.is_dir():
        rep.warn(f"{target} not refreshed: {base} is gone (`ontoskills unlink` forgets it)")
        return
    check_target(base, target)
    report = LinkReport("link", link_.agent, link_.scope, str(target))
    p, digests = plan(link_, catalog, report)
    for folder in p.refused:
        rep.warn(f"{folder} not linked: it was not written by `ontoskills link` (or changed since)")
    for folder in report.left:
        rep.warn(f"{folder} changed since it was linked; left in place and forgotten")
    apply(home, rec, link_, catalog, p, digests)
    if report.added:  # said once by link; again only when the listing grew
        _listing(link_.agent, catalog, report, rep)
