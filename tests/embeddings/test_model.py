"""ensure_model / load_encoder / verify_model without a hub: local folders and the lock."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ontoskills.config import Config, EmbeddingsSettings
from ontoskills.embeddings.model import ensure_model, load_encoder, verify_model
from ontoskills.embeddings.vectors import read_module
from ontoskills.errors import IntegrityError, UsageError
from ontoskills.paths import Home
from tests.helpers.tinymodel import build_tiny_model


def _cfg(tmp_path: Path, **emb: Any) -> Config:
    return Config(path=tmp_path / "config.toml", embeddings=EmbeddingsSettings(**emb))


def test_load_encoder_none_until_installed(tiny_model: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    assert load_encoder(home, _cfg(tmp_path)) is None
    record = ensure_model(home, config=_cfg(tmp_path), model_path=tiny_model)
    assert record.source == "path" and record.revision == "local"
    enc = load_encoder(home, _cfg(tmp_path, threads=2))
    assert enc is not None and enc.threads == 2 and enc.dimension == 8
    # copied, never hardlinked into the user's folder
    assert not os.path.samefile(tiny_model / "model.onnx", home.embeddings_dir / "model.onnx")
    # a configured folder works without anything installed
    other = Home(tmp_path / "other")
    assert load_encoder(other, _cfg(tmp_path, path=str(tiny_model))) is not None


def test_intact_model_needs_no_source_at_all(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path / "home")
    record = ensure_model(home, config=_cfg(tmp_path), model_path=tiny_model)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    record.source = "hub"  # as if it had come from the hub: still no request when intact
    assert ensure_model(home, config=_cfg(tmp_path), expected=record) is record


def test_verify_model_and_expected_mismatch(tiny_model: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    record = ensure_model(home, config=_cfg(tmp_path), model_path=tiny_model)
    assert verify_model(home, record) == []
    (home.embeddings_dir / "tokenizer.json").write_text("{}")
    assert verify_model(home, record, fast=True)
    assert "tokenizer.json" in verify_model(home, record)[0]
    other = build_tiny_model(tmp_path / "other", seed=3)
    with pytest.raises(IntegrityError, match="does not match the lock"):
        ensure_model(home, config=_cfg(tmp_path, path=str(other)), expected=record)


def test_locked_path_model_without_a_path_is_usage_error(tiny_model: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    record = ensure_model(home, config=_cfg(tmp_path), model_path=tiny_model)
    (home.embeddings_dir / "model.onnx").unlink()
    with pytest.raises(UsageError, match="local folder"):
        ensure_model(home, config=_cfg(tmp_path), expected=record)


def test_folder_without_model_files_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"lacks model\.onnx"):
        ensure_model(Home(tmp_path / "h"), config=_cfg(tmp_path), model_path=tmp_path)


def test_malformed_turtle_module_is_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix oc: <https://ontoskills.sh/ontology#> .\noc:x oc:y "unterminated .\n')
    assert read_module(bad, "bad.ttl") is None


def test_validated_model_is_remembered_by_content(tiny_model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = ensure_model(
        Home(tmp_path / "a"), config=_cfg(tmp_path), model_path=tiny_model, cache_dir=cache
    )
    (stamp,) = (cache / "models").glob("*.json")
    assert first.dimension == 8
    stamp.write_text('{"dimension": 99}')  # proves the second home does not load ONNX again
    second = ensure_model(
        Home(tmp_path / "b"), config=_cfg(tmp_path), model_path=tiny_model, cache_dir=cache
    )
    assert second.dimension == 99
    stamp.write_text("garbage")  # an unreadable stamp just means: validate again
    third = ensure_model(
        Home(tmp_path / "c"), config=_cfg(tmp_path), model_path=tiny_model, cache_dir=cache
    )
    assert third.dimension == 8
