"""[policy] refusals are exit 4 naming the rule and the package (issue 24)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CliRunner


def _write(root: Path, body: str) -> None:
    (root / "ontoskills.toml").write_text(body)


def test_min_trust_refuses_a_community_package(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n[policy]\nmin_trust = "verified"\n')
    proc = cli_inproc("sync")
    assert proc.returncode == 4, proc.stderr
    assert "min_trust" in proc.stderr and "acme/design" in proc.stderr
    assert not (project / "ontoskills.lock").exists()


def test_allowed_registries_refuses_others(project: Path, cli_inproc: CliRunner) -> None:
    _write(
        project,
        '[dependencies]\n"acme/devtools" = {}\n[policy]\nallowed_registries = ["ontostore"]\n',
    )
    proc = cli_inproc("sync")
    assert proc.returncode == 4, proc.stderr
    assert "allowed_registries" in proc.stderr and "acme/devtools" in proc.stderr


def test_policy_applies_to_ci_of_an_existing_lock(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/devtools" = {}\n')
    cli_inproc("sync", check=True)
    _write(
        project,
        '[dependencies]\n"acme/devtools" = {}\n[policy]\nallowed_registries = ["other"]\n',
    )
    for verb in (("ci",), ("sync", "--frozen"), ("sync",)):
        proc = cli_inproc(*verb)
        assert proc.returncode == 4, (verb, proc.stderr)
        assert "allowed_registries" in proc.stderr
    _write(
        project, '[dependencies]\n"acme/devtools" = {}\n[policy]\nallowed_registries = ["local"]\n'
    )
    cli_inproc("ci", check=True)


def test_require_signed_refuses_an_unsigned_registry(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n[policy]\nrequire_signed = true\n')
    proc = cli_inproc("sync")
    assert proc.returncode == 10, proc.stderr
    assert not (project / "ontoskills.lock").exists()


def test_update_in_a_project_keeps_to_the_policy(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    cli_inproc("sync", check=True)
    lock = (project / "ontoskills.lock").read_bytes()
    _write(project, '[dependencies]\n"acme/design" = {}\n[policy]\nmin_trust = "official"\n')
    proc = cli_inproc("update")
    assert proc.returncode == 4, proc.stderr
    assert "acme/design" in proc.stderr
    assert (project / "ontoskills.lock").read_bytes() == lock
