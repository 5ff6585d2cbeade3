"""Defects left from round 2 (issue 25 round 3 item 4), each of which the old code had."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner


@pytest.mark.parametrize(
    "verb",
    [("sync", "--frozen"), ("sync", "--locked"), ("install", "--frozen"), ("ci",)],
)
def test_installing_the_lock_without_a_lock_is_exit_3_and_writes_nothing(
    project: Path, cli_inproc: CliRunner, verb: tuple[str, ...]
) -> None:
    # an empty manifest: the old `sync --frozen` wrote an empty lock and an empty tree here
    (project / "ontoskills.toml").write_text("[dependencies]\n")
    proc = cli_inproc(*verb)
    assert proc.returncode == 3, proc.stderr
    assert f"no lock at {project / 'ontoskills.lock'}" in proc.stderr, proc.stderr
    assert "hint: run `ontoskills sync`" in proc.stderr
    assert sorted(p.name for p in project.iterdir()) == ["ontoskills.toml"]


def test_install_with_embeddings_of_a_locked_package_adds_its_vectors(
    project: Path, cli_inproc: CliRunner
) -> None:
    from ontoskills import lockfile
    from tests.helpers.tinymodel import build_tiny_model

    model = build_tiny_model(project.parent / "tiny", dim=8)
    (project / "ontoskills.toml").write_text('[dependencies]\n"acme/devtools" = {}\n')
    cli_inproc("sync", check=True)
    assert not lockfile.load(project / "ontoskills.lock").packages["acme/devtools"].with_embeddings
    # the old code kept the locked package as it was: exit 0, no vectors, nothing said
    cli_inproc("install", "--with-embeddings", "--model", str(model), "acme/devtools", check=True)
    lock = lockfile.load(project / "ontoskills.lock")
    assert lock.packages["acme/devtools"].with_embeddings and lock.embeddings is not None
    tree = project / ".ontoskills/ontologies"
    assert (tree / "system/embeddings/model.onnx").is_file()
    assert any(tree.glob("author/acme/devtools/*/intents.json"))
    # kept by a plain sync (the lock says so) and restored by ci
    cli_inproc("sync", "--locked", check=True)
    cli_inproc("ci", "--model", str(model), check=True)
    assert any(tree.glob("author/acme/devtools/*/intents.json"))


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ('[policy]\nmin_trust = "high"\n', ":2: policy.min_trust must be one of"),
        ("[policy]\nrequire_signed = 1\n", ":2: policy.require_signed must be"),
        ('[policy]\nallowed_registries = "x"\n', ":2: policy.allowed_registries must be"),
        ("[embeddings]\nmodel = 3\n", ":2: embeddings.model must be"),
    ],
)
def test_a_bad_value_names_its_key_path_once(
    project: Path, cli_inproc: CliRunner, body: str, named: str
) -> None:
    # the old messages said `policy.min_trust.min_trust`, `embeddings.model.model`
    (project / "ontoskills.toml").write_text(body)
    proc = cli_inproc("sync")
    assert proc.returncode == 2 and named in proc.stderr, proc.stderr
