from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.helpers.fakehub import FakeHub
from tests.helpers.tinymodel import build_tiny_model

HUB_MAP = {"onnx/model.onnx": "model.onnx", "tokenizer.json": "tokenizer.json"}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a tiny real ONNX encoder (dim 8) and a WordPiece tokenizer.json."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def hub_server() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1")
    server.start()
    yield server
    if server.is_running():
        server.stop()


@pytest.fixture
def fakehub(
    hub_server: HTTPServer, tiny_model: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> FakeHub:
    """The tiny model served by a fake hub; HF_ENDPOINT points at it, revision pinned to it."""
    hub = FakeHub(hub_server).add_folder(tiny_model, HUB_MAP).install()
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return hub
