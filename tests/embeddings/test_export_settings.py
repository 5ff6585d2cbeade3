"""`export-embeddings` encodes with the `[embeddings]` encoder settings (issue 26): the
registry export and the vectors derived for an installed package are in the space the
configured search reads (pooling, passage prefix, tokens per text), never the defaults'."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ontoskills.embeddings.encoder import Encoder
from ontoskills.embeddings.vectors import derived_path, read_derived
from ontoskills.paths import Home
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry

SETTINGS = 'pooling = "mean"\npassage_prefix = "check "\nquery_prefix = "find "\nmax_tokens = 8\n'
INTENTS = ("debug failing tests and fix the build before a commit", "find root cause of a bug")


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    skill = SkillSpec("debugging", intents=INTENTS, vectors=False)  # derived on install
    spec = PackageSpec(id="acme/devtools", dimension=8, skills=[skill])
    return build_registry(tmp_path / "reg", [spec])


def _configure(env: dict[str, str], extra: str) -> None:
    config = Home(Path(env["ONTOSKILLS_HOME"])).config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[embeddings]\n" + extra)


def _encoders(model: Path) -> tuple[Encoder, Encoder]:
    files = (model / "model.onnx", model / "tokenizer.json")
    configured = Encoder(*files, passage_prefix="check ", query_prefix="find ", max_length=8)
    return configured, Encoder(*files)


def _rows(doc: dict[str, object]) -> dict[str, np.ndarray]:
    items = doc["intents"]
    assert isinstance(items, list)
    return {i["intent"]: np.asarray(i["embedding"], dtype=np.float32) for i in items}


def test_registry_export_uses_the_configured_prefix_and_tokens(
    cli_inproc: CliRunner, registry: Path, tiny_model: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    _configure(env, SETTINGS)
    out = tmp_path / "out"
    cli_inproc(
        "export-embeddings", "--ontology-root", str(registry / "packages"),
        "--output-dir", str(out), "--model", str(tiny_model), "--json", check=True,
    )  # fmt: skip
    rows = _rows(json.loads((out / "acme/devtools/debugging/intents.json").read_text()))
    configured, default = _encoders(tiny_model)
    for intent, vector in rows.items():
        np.testing.assert_allclose(vector, configured.encode([intent])[0], atol=1e-5)
        assert not np.allclose(vector, default.encode([intent])[0], atol=1e-3)


def test_installed_package_vectors_use_the_configured_settings(
    cli_inproc: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    # installed with the defaults: this process now holds the default-settings session
    cli_inproc(
        "--registry", str(registry), "install", "acme/devtools",
        "--model", str(tiny_model), "--json", check=True,
    )  # fmt: skip
    _configure(env, f'path = "{tiny_model}"\n' + SETTINGS)
    derived_path(home, "acme/devtools").unlink(missing_ok=True)
    cli_inproc("export-embeddings", "acme/devtools", "--json", check=True)
    found = read_derived(derived_path(home, "acme/devtools"))
    assert found is not None
    meta, vectors = found
    entries = meta["entries"]
    assert isinstance(entries, list) and len(entries) == len(vectors) > 0
    configured, default = _encoders(tiny_model)
    for entry, vector in zip(entries, vectors, strict=True):
        text = entry["intent"]
        np.testing.assert_allclose(vector, configured.encode([text])[0], atol=1e-5)
        assert not np.allclose(vector, default.encode([text])[0], atol=1e-3)
