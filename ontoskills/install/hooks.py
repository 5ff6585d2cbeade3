"""The skeleton's hooks around a commit (install/mutation.py runs them, in this order):
embeddings prepared before it; after it or a discard, embeddings finished and the reference
indexes (system/index.*.ttl) rewritten; after a commit only, linked agent skills folders
refreshed.

Each reads the session and the lock it is given (the reference indexes and the links are
best effort: a warning, the verb's commit stands). Moved out of the skeleton so that file
holds the order of the steps, and these the steps.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import OntoskillsError
from ..lockfile import Lockfile, load
from .compat import write_reference_indexes
from .session import Session


def prepare_embeddings(
    session: Session, lock: Lockfile, new: Path, model_path: str | None
) -> None:
    """Model present and verified, staged vectors compatible; records [embeddings] in `lock`
    (the one about to be committed; `new`: the transaction's folder of staged packages)."""
    if not (model_path or any(p.with_embeddings for p in lock.packages.values())):
        return
    from ..embeddings import sync as embeddings_sync  # numpy & co. only when needed

    staged = {p: new / p for p in lock.packages if (new / p).is_dir()}
    warnings = embeddings_sync.prepare(
        session.home,
        session.config,
        lock,
        offline=session.options.offline,
        model_path=model_path,
        package_dirs=staged,
        reporter=session.reporter,
        cache_dir=session.cache.root,
    )
    for warning in warnings:
        session.reporter.warn(warning)


def finish_embeddings(session: Session, lock: Lockfile) -> None:
    """Sample-check stored vectors, derive missing ones, drop derived data of removed packages
    (`lock`: the lock on disk now)."""
    if lock.embeddings is None and not (session.home.derived_dir / "vectors").is_dir():
        return
    from ..embeddings import sync as embeddings_sync

    warnings = embeddings_sync.finish(
        session.home,
        session.config,
        lock,
        reporter=session.reporter,
        cache_dir=session.cache.root,
    )
    for warning in warnings:
        session.reporter.warn(warning)


def refresh_links(session: Session) -> None:
    """Agent skills folders written by `ontoskills link` follow what is served now (only
    when a link record exists: a stat otherwise; best effort, warnings, docs/AGENTS.md)."""
    from ..agentlink import record

    if not record.exists(session.home):
        return
    from ..agentlink.ops import refresh  # the search service: only when something is linked

    session.reporter.stage("refreshing linked agent skills folders")
    try:  # the verb's commit stands whatever happens here
        refresh(session.home, session.lockfile_path, session.config, session.reporter)
    except (OSError, OntoskillsError, ValueError) as exc:
        session.reporter.warn(f"linked agent skills folders not refreshed: {exc}")


def refresh_reference_indexes(session: Session, lock: Lockfile | None = None) -> bool:
    """Keep system/index.*.ttl in step with the lock (`lock`: the one on disk, read when not
    given) (best effort: a warning on failure). True when a file was rewritten."""
    try:
        if lock is None:
            lock = load(session.lockfile_path)
        return write_reference_indexes(session.home, lock)
    except (OSError, OntoskillsError) as exc:
        session.reporter.warn(f"could not refresh system/index.enabled.ttl: {exc}")
        return False
