"""What to do with one package whose new version is staged: the decision install and update
share (before, update had its own copy without the drift branch: it never repaired a
damaged tree and never said it kept an edited one).

Pure: no I/O. The caller stages the package, measures the installed tree's drift against
the lock, and applies the decision (or lets the refusal propagate: nothing was committed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import LocalChangesError, LockOutdatedError, TrustError
from ..lockfile import LockedPackage
from ..manifest import tier_rank
from .options import InstallOptions
from .state import Drift, describe

# unchanged: same content, tree intact: nothing to place (the lock entry may be refreshed)
# kept: same content, but the user edited the tree: left as is, with a warning (--force
#   restores it)
# reinstalled: same content, tree damaged (missing files, modes) or --force over edits
# added / updated: new to the home / new content or tier from the registry
Action = Literal["unchanged", "kept", "reinstalled", "added", "updated"]


@dataclass(frozen=True)
class Decision:
    action: Action
    warning: str | None = None

    @property
    def places(self) -> bool:
        """Whether the staged folder replaces the installed one."""
        return self.action in ("reinstalled", "added", "updated")


def same_content(a: LockedPackage | None, b: LockedPackage) -> bool:
    """Same files (the package integrity digest) at the same trust tier."""
    return a is not None and a.integrity == b.integrity and a.trust_tier == b.trust_tier


def decide(
    existing: LockedPackage | None,
    new: LockedPackage,
    drift: Drift | None,
    opts: InstallOptions,
    *,
    lockfile: Path | str = "the lockfile",
) -> Decision:
    """The decision table (tests/install/test_decide.py):

    | existing | content | installed tree           | --locked   | result                        |
    |----------|---------|--------------------------|------------|-------------------------------|
    | none     |         |                          | refused    | added                         |
    | same     | same    | clean                    | ok         | unchanged                     |
    | same     | same    | edited, no --force       | ok         | kept (+ warning)              |
    | same     | same    | damaged, or --force      | ok         | reinstalled (a repair)        |
    | yes      | changed |                          | refused    | updated, unless a lower tier  |
    |          |         |                          |            | (--allow-trust-downgrade) or  |
    |          |         |                          |            | edits (--force) refuse it     |

    `drift` is the installed tree against `existing` (required when there is one). A refusal
    raises: LockOutdatedError (exit 3), TrustError (4), LocalChangesError (1).
    """
    if existing is None:
        if opts.locked:
            raise _outdated(lockfile, new.id, "is not in it")
        return Decision("added")
    if drift is None:
        raise ValueError(f"{existing.id}: the decision needs the installed tree's drift")
    if same_content(existing, new):
        if drift.clean:
            return Decision("unchanged")
        if drift.user_changes and not opts.force:
            return Decision(
                "kept",
                f"{existing.id}: left as is, it has local changes ({describe(drift)}); "
                "--force restores the published files",
            )
        return Decision("reinstalled")  # the lock stays as it is, so --locked allows it
    if opts.locked:
        raise _outdated(lockfile, new.id, "changed in its registry")
    warning = None
    if tier_rank(new.trust_tier) < tier_rank(existing.trust_tier):
        if not opts.allow_trust_downgrade:
            raise TrustError(
                f"{existing.id} would go from '{existing.trust_tier}' to '{new.trust_tier}' "
                "in its registry",
                hint="pass --allow-trust-downgrade if you accept the lower tier",
            )
        warning = (
            f"{existing.id}: trust tier lowered from '{existing.trust_tier}' to "
            f"'{new.trust_tier}' (--allow-trust-downgrade)"
        )
    if drift.user_changes and not opts.force:
        raise LocalChangesError(
            f"{existing.id} has local changes ({describe(drift)})",
            hint="back them up, then re-run with --force to overwrite them",
        )
    return Decision("updated", warning)


def _outdated(lockfile: Path | str, pid: str, why: str) -> LockOutdatedError:
    return LockOutdatedError(
        f"{lockfile} is out of date: {pid} {why} (--locked)",
        hint="run `ontoskills install` without --locked and commit the new lock",
    )
