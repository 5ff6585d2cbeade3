"""A project folder beside a synthetic folder registry, run from inside the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.registry import build_registry, sample_packages


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def project(tmp_path: Path, registry: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder (no manifest yet) that is the current folder; the global
    config names the synthetic registry `local`, so no flag is needed."""
    home = Path(str(tmp_path / "home"))
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(f'[registries.local]\nurl = "{registry}"\n')
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    return root
