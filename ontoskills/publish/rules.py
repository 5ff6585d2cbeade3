"""Registry policy: version ordering, confusable names, who may set which trust tier."""

from __future__ import annotations

import re

from ..asciinum import uint
from ..errors import ConfusableNameError, TrustError, UsageError, VersionConflictError
from ..manifest import Tier, tier_rank
from ..safety import nfkc

# ASCII digits only (`\d` would take '١.٠.١' and '𝟏.𝟎.𝟐' as 1.0.1 and 1.0.2), at most 18
# per number: int() of a 5,000-digit part is a ValueError, not an order.
_VERSION_RE = re.compile(
    r"^v?([0-9]{1,18}(?:\.[0-9]{1,18}){0,3})"
    r"(?:-([0-9A-Za-z][0-9A-Za-z.-]*))?(?:\+[0-9A-Za-z.-]+)?$"
)
# Look-alikes inside the name alphabet [a-z0-9._-]: digits for letters, separators, pairs.
_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_CHARS = str.maketrans(
    {"0": "o", "1": "l", "i": "l", "3": "e", "5": "s", "8": "b", "_": "-", ".": "-"}
)


def version_key(version: str) -> tuple[tuple[int, ...], int, tuple[tuple[int, str], ...]]:
    """Semver-like ordering: 1.2 == 1.2.0 < 1.10; a pre-release sorts before its release."""
    m = _VERSION_RE.fullmatch(version.strip())
    if not m:
        raise UsageError(
            f"version {version[:80]!r} is not a release number",
            hint="use MAJOR.MINOR.PATCH, optionally -prerelease (e.g. 1.2.0, 2.0.0-rc.1)",
        )
    nums = tuple(uint(p) or 0 for p in m[1].split("."))
    nums = nums + (0,) * (4 - len(nums))
    pre = m[2]
    pre_key = tuple(_pre_part(p) for p in (pre or "").split("."))
    return nums, 0 if pre else 1, pre_key if pre else ()


def _pre_part(part: str) -> tuple[int, str]:
    """A pre-release identifier's sort key: numbers (ASCII digits) by value, before words."""
    number = uint(part)
    return (0, f"{number:020d}") if number is not None else (1, part)


def check_version(package_id: str, new: str, published: str | None) -> None:
    new_key = version_key(new)
    if published is None:
        return
    try:
        old_key = version_key(published)
    except UsageError:
        old_key = None  # a hand-written registry with a free-form version: only equality
    if new.strip() == published.strip() or old_key == new_key:
        raise VersionConflictError(
            f"{package_id} {new} is already published; published versions are immutable",
            hint="bump `version` in package.json (then `ontoskills pack`) and publish again",
        )
    if old_key is not None and new_key < old_key:
        raise VersionConflictError(
            f"{package_id} {new} is lower than the published {published}",
            hint=f"publish a version greater than {published}",
        )


def skeleton(name: str) -> str:
    text = nfkc(name).lower()
    for a, b in _PAIRS:
        text = text.replace(a, b)
    return text.translate(_CHARS)


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def confusable_with(package_id: str, existing: list[str]) -> str | None:
    """The existing id a new one could be mistaken for (same skeleton or 1 edit away)."""
    sk = skeleton(package_id)
    for other in sorted(existing):
        if other == package_id:
            continue
        if skeleton(other) == sk or edit_distance(package_id, other) <= 1:
            return other
    return None


def check_new_name(package_id: str, existing: list[str], force: bool) -> None:
    other = confusable_with(package_id, existing)
    if other is not None and not force:
        raise ConfusableNameError(
            f"{package_id} is too close to the existing package {other} (confusable name)",
            hint="choose a clearly different name, or pass --force if this is intended",
        )


def decide_tier(
    package_id: str, existing_tier: str | None, requested: str | None, own_registry: bool
) -> str:
    """New packages are community unless a maintainer asks on their own registry; a
    publisher can lower an existing tier but never raise it."""
    if requested is not None:
        if Tier.get(requested) is None:
            raise UsageError(f"--trust must be one of {Tier.listed()}")
        if not own_registry:
            raise UsageError(
                "--trust applies only to a registry you maintain (a local path)",
                hint="the registry's maintainers set the tier when they merge your branch",
            )
    if existing_tier is None:
        return requested or "community"
    if requested is not None and tier_rank(requested) > tier_rank(existing_tier):
        raise TrustError(
            f"{package_id} is '{existing_tier}'; a publish can never raise its trust tier "
            f"to '{requested}'",
            hint="trust tiers are raised by editing index.json in a reviewed change",
        )
    return requested or existing_tier
