"""Another encoder is a setting (issue 26 item 3): when the configured encoder is not the
model a registry's stored vectors were made with (another model id, or other pooling /
prefixes / tokens), the catalog derives every vector from the installed Turtle with that
encoder, cached per model identity; with the model they were made with, they are used."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ontoskills.catalog.live import LiveCatalog
from ontoskills.catalog.model import CatalogData
from ontoskills.catalog.vectorcache import VectorCache
from ontoskills.config import load_config
from ontoskills.embeddings.model import load_encoder, model_identity
from ontoskills.paths import Home
from tests.helpers.inproc import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry

STORED = "debug failing tests"  # ships an (8-dim, synthetic) vector in intents.json
DERIVED = "write a plan"  # ships none (QUIRKS 6): always derived


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    return cli_inproc


@pytest.fixture
def home(cli: CliRunner, tmp_path: Path, tiny_model: Path, env: dict[str, str]) -> Home:
    registry = build_registry(
        tmp_path / "reg",
        [
            PackageSpec(
                id="acme/devtools",
                dimension=8,
                skills=[
                    SkillSpec("debugging", intents=(STORED, "find root cause")),
                    SkillSpec("planning", intents=(DERIVED,), vectors=False),
                ],
            )
        ],
    )
    proc = cli("--registry", str(registry), "install", "acme/devtools", "--model", str(tiny_model))
    assert proc.returncode == 0, proc.stderr
    return Home(Path(env["ONTOSKILLS_HOME"]))


def build(home: Home, embeddings: str = "") -> tuple[CatalogData, LiveCatalog[int]]:
    if embeddings:
        with home.config_file.open("a") as f:
            f.write(f"\n[embeddings]\n{embeddings}\n")
    config = load_config(home.config_file)
    cat: LiveCatalog[int] = LiveCatalog(
        home, home.default_lockfile, config, index=lambda data, fresh: 0
    )
    return cat.view.data, cat


def row(data: CatalogData, text: str) -> np.ndarray:
    return np.asarray(data.vectors[data.vector_text.index(text)])


def own(home: Home, text: str) -> np.ndarray:
    encoder = load_encoder(home, load_config(home.config_file))
    assert encoder is not None
    v = encoder.encode([text])[0]
    return np.asarray(v / np.linalg.norm(v))


def stored(home: Home) -> np.ndarray:
    path = next(home.ontologies.rglob("debugging/intents.json"))
    doc = json.loads(path.read_text())
    v = np.asarray(next(i["embedding"] for i in doc["intents"] if i["intent"] == STORED))
    return v / np.linalg.norm(v)


def test_the_model_the_vectors_were_made_with_uses_them(home: Home) -> None:
    data, _ = build(home)  # the lock's model id is the one intents.json names
    np.testing.assert_allclose(row(data, STORED), stored(home), atol=1e-5)
    np.testing.assert_allclose(row(data, DERIVED), own(home, DERIVED), atol=1e-5)


@pytest.mark.parametrize(
    "setting",
    ['model = "acme/tiny-encoder"', 'passage_prefix = "passage: "', 'pooling = "cls"'],
)
def test_another_encoder_derives_every_vector_itself(home: Home, setting: str) -> None:
    data, cat = build(home, setting)
    assert not np.allclose(own(home, STORED), stored(home), atol=1e-3)
    np.testing.assert_allclose(row(data, STORED), own(home, STORED), atol=1e-5)
    np.testing.assert_allclose(row(data, DERIVED), own(home, DERIVED), atol=1e-5)
    # derived under this encoder's identity: a rebuild reads them back, never re-encodes
    identity = model_identity(home, load_config(home.config_file))
    assert cat.view.signature.model == identity
    cache = VectorCache(home.derived_dir, identity, lambda texts: np.zeros((0, 8)))
    assert {STORED, DERIVED} <= set(cache.row)
