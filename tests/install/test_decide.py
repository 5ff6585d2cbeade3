"""The per-package decision install and update share (install/decide.py): its table, then
the divergences the old copies had, on a real home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.errors import LocalChangesError, LockOutdatedError, TrustError
from ontoskills.install.decide import Decision, decide
from ontoskills.install.options import InstallOptions
from ontoskills.install.state import Drift
from ontoskills.lockfile import LockedFile, LockedPackage
from tests.helpers.domain import Domain
from tests.helpers.registry import build_registry, sample_packages

CLEAN = Drift()
EDITED = Drift(modified=["notes.md"])
DAMAGED = Drift(missing=["a.ttl"], mode=["run.sh"])


def pkg(content: str = "v1", tier: str = "official") -> LockedPackage:
    f = LockedFile(path="a.ttl", sha256=(content * 64)[:64], size=len(content))
    return LockedPackage("acme/x", "1.0", "reg", tier, ["acme/x"], [f], {"a": True})


def opts(**kw: bool) -> InstallOptions:
    return InstallOptions(**kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("existing", "new", "drift", "options", "action"),
    [
        (None, pkg(), None, opts(), "added"),
        (pkg(), pkg(), CLEAN, opts(), "unchanged"),
        (pkg(), pkg(), CLEAN, opts(locked=True), "unchanged"),
        (pkg(), pkg(), EDITED, opts(), "kept"),
        (pkg(), pkg(), EDITED, opts(locked=True), "kept"),
        (pkg(), pkg(), EDITED, opts(force=True), "reinstalled"),
        (pkg(), pkg(), DAMAGED, opts(), "reinstalled"),
        (pkg(), pkg(), DAMAGED, opts(locked=True), "reinstalled"),  # a repair: same lock
        (pkg(), pkg("v2"), CLEAN, opts(), "updated"),
        (pkg(), pkg("v2"), DAMAGED, opts(), "updated"),  # nothing of the user's is lost
        (pkg(), pkg("v2"), EDITED, opts(force=True), "updated"),
        (pkg(tier="community"), pkg(tier="official"), CLEAN, opts(), "updated"),  # a raise
        (pkg(), pkg(tier="community"), CLEAN, opts(allow_trust_downgrade=True), "updated"),
    ],
)
def test_decision_table(
    existing: LockedPackage | None,
    new: LockedPackage,
    drift: Drift | None,
    options: InstallOptions,
    action: str,
) -> None:
    decision = decide(existing, new, drift, options)
    assert decision.action == action
    assert decision.places == (action in ("added", "updated", "reinstalled"))


@pytest.mark.parametrize(
    ("existing", "new", "drift", "options", "error", "words"),
    [
        (None, pkg(), None, opts(locked=True), LockOutdatedError, "is not in it"),
        (pkg(), pkg("v2"), CLEAN, opts(locked=True), LockOutdatedError, "changed in its"),
        (pkg(), pkg(tier="community"), CLEAN, opts(), TrustError, "'official' to 'community'"),
        (pkg(), pkg("v2"), EDITED, opts(), LocalChangesError, "modified: notes.md"),
        # a lower tier is refused before the edits are looked at (both need a flag)
        (pkg(), pkg("v2", "community"), EDITED, opts(force=True), TrustError, "--allow"),
        (pkg(), pkg("v2", "community"), EDITED, opts(allow_trust_downgrade=True),
         LocalChangesError, "--force"),
    ],
)  # fmt: skip
def test_refusals(
    existing: LockedPackage | None,
    new: LockedPackage,
    drift: Drift | None,
    options: InstallOptions,
    error: type[Exception],
    words: str,
) -> None:
    with pytest.raises(error) as err:
        decide(existing, new, drift, options, lockfile="proj/ontoskills.lock")
    text = f"{err.value.message} {err.value.hint}"  # type: ignore[attr-defined]
    assert words in text, text


def test_kept_and_lowered_tier_say_so() -> None:
    kept = decide(pkg(), pkg(), EDITED, opts())
    assert kept.warning is not None and "notes.md" in kept.warning and "--force" in kept.warning
    lowered = decide(pkg(), pkg(tier="community"), CLEAN, opts(allow_trust_downgrade=True))
    assert lowered.warning == (
        "acme/x: trust tier lowered from 'official' to 'community' (--allow-trust-downgrade)"
    )
    assert decide(pkg(), pkg("v2"), CLEAN, opts()) == Decision("updated")


def test_an_existing_package_needs_its_drift() -> None:
    with pytest.raises(ValueError):
        decide(pkg(), pkg(), None, opts())


# The divergences of the old copies, on a real home --------------------------------------


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


def test_update_repairs_a_damaged_tree_like_install(domain: Domain, registry: Path) -> None:
    """update had install's decision without the drift branch: nothing new upstream meant
    "unchanged", even with files missing from the installed tree."""
    domain.install("acme/devtools", registry=str(registry))
    root = domain.package_dir("acme/devtools")
    (root / "planning/ontoskill.ttl").unlink()
    report = domain.update("acme/devtools")
    assert [(c.package_id, c.action) for c in report.changes] == [("acme/devtools", "reinstalled")]
    assert (root / "planning/ontoskill.ttl").is_file()
    assert domain.doctor().healthy
    assert not report.lock_changed  # a repair: the lock is the same


def test_update_keeps_edits_when_nothing_is_new_and_says_so(domain: Domain, registry: Path) -> None:
    domain.install("acme/devtools", registry=str(registry))
    notes = domain.package_dir("acme/devtools") / "debugging/notes.md"
    notes.write_text("mine")
    report = domain.update("acme/devtools")
    assert report.changes == []  # left as is
    assert any("left as is" in w and "debugging/notes.md" in w for w in domain.warnings)
    assert notes.read_text() == "mine"
    domain.update("acme/devtools", force=True)
    assert notes.read_bytes() == b"# notes\r\nwindows line endings\r\n"


def test_locked_install_repairs_without_calling_the_lock_outdated(
    domain: Domain, registry: Path
) -> None:
    """`install --locked` of a package whose tree lost a file: same content, same lock, a
    repair; before, it failed saying the package "changed in its registry"."""
    domain.install("acme/devtools", registry=str(registry))
    lock_before = domain.lock_path.read_bytes()
    (domain.package_dir("acme/devtools") / "LICENSE").unlink()
    report = domain.install("acme/devtools", registry=str(registry), locked=True)
    assert [c.action for c in report.changes] == ["reinstalled"]
    assert domain.lock_path.read_bytes() == lock_before


def test_accepted_downgrade_is_a_warning(domain: Domain, registry: Path) -> None:
    domain.add_registry("reg", registry)
    domain.install("acme/devtools")
    index = json.loads((registry / "index.json").read_text())
    index["packages"][0]["trust_tier"] = "community"
    (registry / "index.json").write_text(json.dumps(index))
    domain.update("acme/devtools", allow_trust_downgrade=True)
    assert "acme/devtools: trust tier lowered from 'official' to 'community'" in " ".join(
        domain.warnings
    )


def test_enable_of_an_enabled_skill_does_not_claim_a_lock_change(
    domain: Domain, registry: Path
) -> None:
    """enable/disable set lock_changed unconditionally; it says whether the lock changed."""
    domain.install("acme/devtools", registry=str(registry))
    assert not domain.enable("acme/devtools/planning").lock_changed
    assert domain.disable("acme/devtools/planning").lock_changed
