"""Issue 13 class 9: a registry used without `registry add` (`--registry URL|PATH`,
ONTOSKILLS_REGISTRY, or a lock naming a registry that is no longer configured) is capped at
community, whatever its index says; only `registry add NAME URL [--trust T]` lifts the cap.

The sample registry's index labels acme/devtools `official` and acme/design `community`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ontoskills import lockfile
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.registry import build_registry, commit_all, sample_packages


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def lock(env: dict[str, str]) -> Any:
    def read() -> lockfile.Lockfile:
        return lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")

    return read


@pytest.mark.parametrize("kind", ["folder", "git", "http"])
def test_an_adhoc_registry_cannot_label_itself_official(
    kind: str, cli: CliRunner, registry: Path, lock: Any
) -> None:
    if kind == "git":
        commit_all(registry)
    with FaultServer(registry) as srv:
        url = srv.url if kind == "http" else str(registry)
        cli("--registry", url, "install", "acme/devtools", check=True)
        proc = cli("--registry", url, "install", "acme/design", "--min-trust", "official")
    assert lock().packages["acme/devtools"].trust_tier == "community"
    assert proc.returncode == 4
    assert "registry add" in proc.stderr and "--trust" in proc.stderr  # the way out


def test_the_environment_variable_is_adhoc_too(cli: CliRunner, registry: Path, lock: Any) -> None:
    cli("install", "acme/devtools", extra_env={"ONTOSKILLS_REGISTRY": str(registry)}, check=True)
    assert lock().packages["acme/devtools"].trust_tier == "community"


@pytest.mark.parametrize(
    ("add_args", "tier"),
    [
        (["--trust", "official"], "official"),
        (["--trust", "verified"], "verified"),  # a cap below the index's tier still caps
        ([], "official"),  # configured without --trust: the index's tier, as before
    ],
)
def test_a_configured_registry_keeps_its_configured_trust_by_name_or_by_location(
    add_args: list[str], tier: str, cli: CliRunner, registry: Path, lock: Any, tmp_path: Path
) -> None:
    cli("registry", "add", "mine", str(registry), *add_args, check=True)
    cli("--registry", "mine", "install", "acme/devtools", check=True)
    assert lock().packages["acme/devtools"].trust_tier == tier
    # the same folder given by path (through a symlink, even) is the configured registry
    link = tmp_path / "link"
    link.symlink_to(registry, target_is_directory=True)
    cli("--registry", str(link), "remove", "acme/devtools", check=True)
    cli("--registry", str(link), "install", "acme/devtools", check=True)
    got = lock()
    assert got.packages["acme/devtools"].trust_tier == tier
    assert got.packages["acme/devtools"].registry == "mine"


def test_update_and_outdated_keep_the_cap_of_a_registry_that_is_not_configured(
    cli: CliRunner, registry: Path, lock: Any
) -> None:
    """The lock records where a package came from, not a trust level: re-reading that
    registry later (update, outdated) applies the ad-hoc cap again, so nothing rises."""
    cli("--registry", str(registry), "install", "acme/devtools", check=True)
    out = json.loads(cli("outdated", "--json", check=True).stdout)
    assert [r["status"] for r in out["packages"]] == ["current"]
    proc = cli("update", "--json", check=True)
    assert lock().packages["acme/devtools"].trust_tier == "community", proc.stdout
    # configuring it afterwards, with trust, is how a user lifts the cap
    cli("registry", "add", "mine", str(registry), "--trust", "official", check=True)
    out = json.loads(cli("outdated", "--json", check=True).stdout)
    assert [r["status"] for r in out["packages"]] != ["current"]  # the tier would change
    cli("update", check=True)
    assert lock().packages["acme/devtools"].trust_tier == "official"


def test_a_lock_written_before_the_cap_is_not_silently_downgraded(
    cli: CliRunner, registry: Path, env: dict[str, str], lock: Any
) -> None:
    """A lock that says official for a package from an unconfigured registry (written before
    this rule): update refuses the drop to community unless the user accepts it."""
    cli("--registry", str(registry), "install", "acme/devtools", check=True)
    path = Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock"
    path.write_text(path.read_text().replace('trust_tier = "community"', 'trust_tier = "official"'))
    assert lock().packages["acme/devtools"].trust_tier == "official"
    proc = cli("update")
    assert proc.returncode == 4 and "--allow-trust-downgrade" in proc.stderr
    cli("update", "--allow-trust-downgrade", check=True)
    assert lock().packages["acme/devtools"].trust_tier == "community"
