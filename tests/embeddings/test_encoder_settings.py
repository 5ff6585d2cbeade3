"""The encoder is configuration (issue 26 item 3): pooling, query / passage prefixes, tokens
per text and the expected dimension come from `[embeddings]`, run for real through a tiny
ONNX model (tests/helpers/tinymodel.py), and are part of the model identity (so vectors
derived under other settings are never reused)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ontoskills.config import load_config
from ontoskills.embeddings.encoder import Encoder, ModelError
from ontoskills.embeddings.model import load_encoder, model_identity
from ontoskills.errors import EXIT_USAGE, ConfigError
from ontoskills.paths import Home

from ..helpers.tinymodel import build_tiny_model


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return build_tiny_model(tmp_path / "model", dim=8)


def encoder(folder: Path, **kw: object) -> Encoder:
    return Encoder(folder / "model.onnx", folder / "tokenizer.json", **kw)  # type: ignore[arg-type]


def test_cls_pooling_reads_the_first_token_only(model: Path) -> None:
    cls, mean = encoder(model, pooling="cls"), encoder(model)
    # the tiny model's state of a token does not depend on its neighbours: every text starts
    # with [CLS], so CLS pooling gives every text the same vector, mean pooling does not
    np.testing.assert_allclose(cls.encode_one("fix bug"), cls.encode_one("design color"))
    assert not np.allclose(mean.encode_one("fix bug"), mean.encode_one("design color"))
    np.testing.assert_allclose(cls.encode(["fix bug"])[0], cls.encode_one("git commit"), atol=1e-6)


def test_prefixes_go_before_queries_and_passages_respectively(model: Path) -> None:
    plain = encoder(model)
    e5 = encoder(model, query_prefix="find ", passage_prefix="check ")
    np.testing.assert_allclose(e5.encode_one("fix bug"), plain.encode_one("find fix bug"))
    np.testing.assert_allclose(
        e5.encode(["fix bug"])[0], plain.encode(["check fix bug"])[0], atol=1e-6
    )
    assert not np.allclose(e5.encode_one("fix bug"), e5.encode(["fix bug"])[0])


def test_max_tokens_cuts_long_texts(model: Path) -> None:
    short = encoder(model, max_length=3)  # [CLS] fix [SEP]
    np.testing.assert_allclose(short.encode_one("fix bug code"), short.encode_one("fix"))


def test_a_model_of_another_dimension_is_refused(model: Path) -> None:
    with pytest.raises(ModelError, match="8-dim"):
        encoder(model, dimension=384).encode_one("fix bug")
    assert encoder(model, dimension=8).encode_one("fix bug").shape == (8,)


def test_settings_flow_from_config_to_encoder_and_identity(tmp_path: Path, model: Path) -> None:
    home = Home(tmp_path / "home")
    plain = tmp_path / "plain.toml"
    plain.write_text(f'[embeddings]\npath = "{model}"\n')
    e5 = tmp_path / "e5.toml"
    e5.write_text(
        f'[embeddings]\npath = "{model}"\npooling = "cls"\nquery_prefix = "query: "\n'
        'passage_prefix = "passage: "\nmax_tokens = 64\ndimension = 8\n'
    )
    cfg = load_config(e5)
    enc = load_encoder(home, cfg)
    assert enc is not None
    assert (enc.pooling, enc.query_prefix, enc.passage_prefix) == ("cls", "query: ", "passage: ")
    assert (enc.max_length, enc.expected_dimension) == (64, 8)
    # another pooling or prefix is another model: the vector cache and snapshot key differ
    assert model_identity(home, cfg) != model_identity(home, load_config(plain))
    again = load_config(e5)
    assert model_identity(home, cfg) == model_identity(home, again)
    assert "pooling" in cfg.embeddings.to_toml()  # written back when `registry add` saves


@pytest.mark.parametrize(
    "line",
    [
        'pooling = "max"',
        "pooling = 1",
        f'query_prefix = "{"q" * 65}"',
        'passage_prefix = "a\\u0000b"',
        "max_tokens = 2",
        "dimension = 0",
    ],
)
def test_bad_encoder_settings_are_refused(tmp_path: Path, line: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[embeddings]\n{line}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.exit_code == EXIT_USAGE
