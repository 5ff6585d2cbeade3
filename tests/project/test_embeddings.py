"""[embeddings] in a project, and a lock written by `install --model PATH` restored by `ci`
(issue 24 item 5: `ci` had no `--model`, which its own hint named)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ontoskills import lockfile
from tests.conftest import CliRunner
from tests.helpers.tinymodel import build_tiny_model


def test_manifest_model_path_serves_sync_and_ci(project: Path, cli_inproc: CliRunner) -> None:
    build_tiny_model(project / "models" / "tiny", dim=8)
    (project / "ontoskills.toml").write_text(
        '[dependencies]\n"acme/devtools" = {}\n[embeddings]\npath = "models/tiny"\n'
    )
    cli_inproc("sync", check=True)
    lock = lockfile.load(project / "ontoskills.lock")
    assert lock.embeddings is not None and lock.embeddings.source == "path"
    assert lock.packages["acme/devtools"].with_embeddings
    shutil.rmtree(project / ".ontoskills")
    cli_inproc("ci", check=True)  # the model path comes from the manifest, no flag
    assert (project / ".ontoskills/ontologies/system/embeddings/model.onnx").is_file()


def test_ci_takes_the_model_of_a_lock_written_with_model(
    tmp_path: Path, registry: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    model = build_tiny_model(tmp_path / "tiny", dim=8)
    cli_inproc(
        "--registry", str(registry), "install", "acme/devtools", "--model", str(model), check=True
    )
    home = Path(env["ONTOSKILLS_HOME"])
    shutil.rmtree(home / "ontologies")
    cli_inproc("ci", "--model", str(model), check=True)
    assert (home / "ontologies/system/embeddings/model.onnx").is_file()
