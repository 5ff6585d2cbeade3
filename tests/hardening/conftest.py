"""Hypothesis profiles: `ci` keeps the default suite fast; `slow` is for benchmarks/fuzz.py.

Select with HYPOTHESIS_PROFILE=slow (the benchmark script sets it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.conftest import REPO
from tests.helpers.hostile import build_hostile

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,  # CI runs are reproducible; the slow profile explores randomly
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "slow",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "5000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with acme/devtools installed from a good registry; copied per case."""
    base = tmp_path_factory.mktemp("baseline")
    build_hostile(base / "reg")
    env = {
        **os.environ,
        "ONTOSKILLS_HOME": str(base / "home"),
        "ONTOSKILLS_CACHE_DIR": str(base / "cache"),
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    }
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ontoskills",
            "--registry",
            str(base / "reg"),
            "install",
            "acme/devtools",
        ],
        env=env,
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    shutil.rmtree(base / "reg")
    return base


def seed_home(baseline: Path, env: dict[str, str]) -> None:
    """Copy the baseline home (and cache) into this test's isolated env."""
    shutil.copytree(baseline / "home", env["ONTOSKILLS_HOME"], symlinks=True)
    if (baseline / "cache").exists():
        shutil.copytree(baseline / "cache", env["ONTOSKILLS_CACHE_DIR"], symlinks=True)
