"""Model acquisition through the real huggingface_hub code against a fake hub on loopback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ontoskills.config import Config, EmbeddingsSettings
from ontoskills.embeddings import hub
from ontoskills.embeddings.model import ensure_model, verify_model
from ontoskills.errors import (
    EXIT_INTEGRITY,
    EXIT_NETWORK,
    EXIT_NOT_FOUND,
    AuthError,
    IntegrityError,
    NetworkError,
    NotFoundError,
)
from ontoskills.fsutil import sha256_file
from ontoskills.paths import Home
from tests.conftest import shared_path
from tests.embeddings.conftest import HUB_MAP
from tests.helpers.fakehub import FakeHub


def _config(tmp_path: Path, commit: str, **extra: Any) -> Config:
    settings = EmbeddingsSettings(revision=commit, **extra)
    return Config(path=tmp_path / "config.toml", embeddings=settings)


def test_cold_download_places_and_records_the_model(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path, tiny_model: Path
) -> None:
    home = Home.resolve()
    record = ensure_model(home, config=_config(tmp_path, fakehub.commit))
    assert (record.model, record.revision, record.source) == (
        hub.DEFAULT_REPO,
        fakehub.commit,
        "hub",
    )
    assert record.dimension == 8
    want = {n: sha256_file(tiny_model / n)[0] for n in ("model.onnx", "tokenizer.json")}
    assert {f.path: f.sha256 for f in record.files} == want
    assert verify_model(home, record) == []
    assert len(fakehub.gets) == 2
    # the files live in the standard HF cache under HF_HOME and are linked, not copied twice
    cached = Path(env["HF_HOME"]) / "hub/models--sentence-transformers--all-MiniLM-L6-v2"
    blob = cached / "blobs" / want["model.onnx"]
    assert blob.is_file()
    assert os.path.samefile(blob, home.embeddings_dir / "model.onnx")


def test_cache_hit_with_server_stopped_and_offline(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))
    fakehub.server.stop()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    other = Home(tmp_path / "second-home")  # a new home: only the HF cache can supply it
    again = ensure_model(other, config=_config(tmp_path, fakehub.commit))
    assert again == first
    assert verify_model(other, again) == []
    assert len(fakehub.gets) == 2  # nothing downloaded twice


def test_offline_with_empty_cache_is_a_network_error(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(NetworkError, match="offline") as info:
        ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit), offline=True)
    assert info.value.exit_code == EXIT_NETWORK
    assert fakehub.log == []  # --offline means no request at all


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"model": "nobody/missing-model"}, "not found"),
        ({"revision": "f" * 40}, "revision"),
    ],
)
def test_404s_are_not_found(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path, change: dict[str, str], match: str
) -> None:
    cfg = _config(tmp_path, fakehub.commit)
    for key, value in change.items():
        setattr(cfg.embeddings, key, value)
    with pytest.raises(NotFoundError, match=match) as info:
        ensure_model(Home.resolve(), config=cfg)
    assert info.value.exit_code == EXIT_NOT_FOUND
    assert not (Home.resolve().embeddings_dir / "model.onnx").exists()


def test_missing_file_is_not_found(fakehub: FakeHub, env: dict[str, str], tmp_path: Path) -> None:
    del fakehub.files["onnx/model.onnx"]
    with pytest.raises(NotFoundError, match=r"onnx/model\.onnx"):
        ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))


def test_unauthorised_is_auth_error(fakehub: FakeHub, env: dict[str, str], tmp_path: Path) -> None:
    fakehub.status = 401
    with pytest.raises(AuthError):
        ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))


def test_truncated_body_fails_and_installs_nothing(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path
) -> None:
    fakehub.truncate.add("onnx/model.onnx")
    with pytest.raises(NetworkError):
        ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))
    assert not (Home.resolve().embeddings_dir / "model.onnx").exists()
    fakehub.truncate.clear()  # the next run repairs it
    record = ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))
    assert verify_model(Home.resolve(), record) == []


def test_sha256_mismatch_is_integrity_error_and_bad_blob_removed(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path
) -> None:
    fakehub.wrong_etag.add("onnx/model.onnx")
    with pytest.raises(IntegrityError, match="sha256") as info:
        ensure_model(Home.resolve(), config=_config(tmp_path, fakehub.commit))
    assert info.value.exit_code == EXIT_INTEGRITY
    assert len(fakehub.gets) == 2  # the bad blob was deleted and fetched once more
    assert not (Home.resolve().embeddings_dir / "model.onnx").exists()
    blobs = Path(env["HF_HOME"]) / "hub/models--sentence-transformers--all-MiniLM-L6-v2/blobs"
    assert all(sha256_file(p)[0] == p.name for p in blobs.iterdir() if p.is_file())


def test_corrupted_cache_blob_is_repaired_by_one_download(
    fakehub: FakeHub, env: dict[str, str], tmp_path: Path
) -> None:
    home = Home.resolve()
    record = ensure_model(home, config=_config(tmp_path, fakehub.commit))
    blob = (home.embeddings_dir / "model.onnx").resolve()
    cached = next(Path(env["HF_HOME"]).rglob("snapshots/*/onnx/model.onnx")).resolve()
    cached.chmod(0o644)
    with open(cached, "ab") as fh:  # bit rot in the cache (and the hardlinked home file)
        fh.write(b"x")
    assert blob.exists()
    again = ensure_model(home, config=_config(tmp_path, fakehub.commit), expected=record)
    assert again == record
    assert verify_model(home, record) == []
    assert len(fakehub.gets) == 3


def test_real_model_through_the_fake_hub(
    hub_server: object, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = shared_path("models", "model.onnx").parent
    fake = FakeHub(hub_server).add_folder(models, HUB_MAP).install()  # type: ignore[arg-type]
    monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
    record = ensure_model(Home.resolve(), config=_config(tmp_path, fake.commit))
    assert record.dimension == 384
    model = next(f for f in record.files if f.path == "model.onnx")
    assert model.sha256 == "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
