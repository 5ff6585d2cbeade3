from __future__ import annotations

import os
from pathlib import Path

import pytest

from ontoskills.errors import NotFoundError, UnsafePathError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig, detect_kind, slug_for_url
from ontoskills.sources import SourceOptions, open_source
from tests.helpers.registry import build_registry, sample_packages


def _source(root: Path, tmp_path: Path):
    cfg = RegistryConfig("t", str(root), "folder")
    return open_source(cfg, SourceOptions(cache=Cache(tmp_path / "cache")))


def test_folder_lists_assets_with_exec_bits(tmp_path: Path) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    src = _source(reg, tmp_path)
    snap = src.load_index()
    assert [e.package_id for e in snap.index] == ["acme/devtools", "acme/design"]
    files = {f.path: f for f in src.list_package("packages/acme/devtools")}
    assert files["debugging/scripts/run.sh"].executable
    assert not files["LICENSE"].executable
    dest = tmp_path / "out"
    sha, size = src.fetch_to("packages/acme/devtools/LICENSE", dest, max_bytes=100)
    assert size == 4 and dest.read_bytes() == b"MIT\n" and len(sha) == 64


def test_folder_refuses_symlinks_and_escapes(tmp_path: Path) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path / "secret", reg / "packages/acme/design/colorize/leak.txt")
    src = _source(reg, tmp_path)
    with pytest.raises(UnsafePathError):
        src.list_package("packages/acme/design")
    with pytest.raises(UnsafePathError):
        src.read("packages/acme/design/colorize/leak.txt", max_bytes=10)
    with pytest.raises(UnsafePathError):
        src.read("../secret", max_bytes=10)
    with pytest.raises(NotFoundError):
        src.read("packages/none.json", max_bytes=10)


def test_detect_kind_and_slug() -> None:
    assert detect_kind("https://github.com/mareasw/ontostore") == "git"
    assert detect_kind("https://example.org/registry/") == "http"
    assert detect_kind("/tmp/somewhere-not-git") == "folder"
    assert detect_kind("/srv/reg.git") == "git"
    assert slug_for_url("http://127.0.0.1:8000/reg/index.json") == "reg"
    assert slug_for_url("https://github.com/mareasw/ontostore.git") == "ontostore"
