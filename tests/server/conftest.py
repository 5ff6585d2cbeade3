"""Fixtures for the server tests: a synthetic registry installed with the real CLI."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages


def extra_package() -> PackageSpec:
    """Installed while a server runs, to prove live reload."""
    return PackageSpec(
        id="zeta/pdfkit",
        version="1.0.0",
        trust_tier="verified",
        skills=[
            SkillSpec(
                "pdf-forms",
                "Fill in PDF forms and flatten them",
                intents=("fill a pdf form", "flatten pdf form fields"),
            )
        ],
    )


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", [*sample_packages(), extra_package()])


@pytest.fixture
def installed(cli: CliRunner, registry: Path, env: dict[str, str]) -> Path:
    """acme/devtools (official) and acme/design (community) installed; returns the home.
    The registry is configured: an ad-hoc --registry would be capped at community."""
    cli("registry", "add", "sample", str(registry), check=True)
    cli("--registry", "sample", "install", "acme/devtools", "acme/design", check=True)
    return Path(env["ONTOSKILLS_HOME"])


@pytest.fixture
def serve_env(env: dict[str, str]) -> dict[str, str]:
    """Environment for a `python -m ontoskills serve` child of this worktree."""
    return {**os.environ, **env, "PYTHONPATH": str(REPO)}


def serve_command(*args: str) -> tuple[str, list[str]]:
    return sys.executable, ["-m", "ontoskills", "serve", *args]
