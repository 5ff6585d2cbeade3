"""`[embeddings]` of a project accepts the encoder settings of config.toml (pooling, query
and passage prefixes, max_tokens, dimension), checked by the same validator and applied to
the project's tree (issue 25 round 3 item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.tinymodel import build_tiny_model


def _manifest(project: Path, encoder: str) -> Path:
    build_tiny_model(project / "models" / "tiny", dim=8)
    path = project / "ontoskills.toml"
    path.write_text(
        '[dependencies]\n"acme/devtools" = {}\n# the e5 family\n'
        f'[embeddings]\npath = "models/tiny"\n{encoder}\n'
    )
    return path


def test_the_manifest_dimension_reaches_the_encoder(project: Path, cli_inproc: CliRunner) -> None:
    # the tiny model makes 8-dim vectors: a manifest asking for 4 must be refused by the
    # encoder itself, which it could not be if the key were read and then dropped
    _manifest(project, "dimension = 4")
    cli_inproc("sync", check=True)
    proc = cli_inproc("search", "fix a bug", "--mode", "semantic")
    assert proc.returncode != 0 and "8-dim" in proc.stderr, proc.stderr


def _scores(cli_inproc: CliRunner) -> set[float]:
    proc = cli_inproc("search", "fix a bug", "--mode", "semantic", "--json", check=True)
    return {hit["score"] for hit in json.loads(proc.stdout)["results"]}


def test_manifest_pooling_decides_the_project_search(project: Path, cli_inproc: CliRunner) -> None:
    manifest = _manifest(project, 'max_tokens = 64\nquery_prefix = "query: "')
    cli_inproc("sync", check=True)
    assert (project / ".ontoskills/ontologies/system/embeddings/model.onnx").is_file()
    mean = _scores(cli_inproc)
    # the tiny model's first token is always [CLS] with the same embedding: CLS pooling
    # gives every skill the same vector, so the ranking changes when the manifest says so
    manifest.write_text(manifest.read_text() + 'pooling = "cls"\n')
    cls = _scores(cli_inproc)
    assert len(cls) == 1 and cls != mean, (cls, mean)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('pooling = "max"', "embeddings.pooling must be one of mean, cls"),
        ("pooling = 1", "embeddings.pooling must be"),
        (f'query_prefix = "{"q" * 65}"', "embeddings.query_prefix must be printable"),
        ('passage_prefix = "a\\u0000b"', "embeddings.passage_prefix must be printable"),
        ("max_tokens = 2", "embeddings.max_tokens must be a number from 8 to 8192"),
        ("dimension = 0", "embeddings.dimension must be a number from 1 to 8192"),
        ("threads = 2", "embeddings.threads is not a known key"),
    ],
)
def test_bad_encoder_settings_are_exit_2_naming_file_line_key(
    project: Path, cli_inproc: CliRunner, line: str, key: str
) -> None:
    manifest = _manifest(project, line)
    body = manifest.read_text()
    proc = cli_inproc("sync")
    assert proc.returncode == 2, proc.stderr
    # the line of the key (line 6: after the comment, the header and `path`) and its path once
    assert f"{manifest}:6: {key}" in proc.stderr, proc.stderr
    assert manifest.read_text() == body
    assert not (project / "ontoskills.lock").exists()
