"""Hypothesis profiles: `ci` keeps the default suite fast; `slow` is for benchmarks/fuzz.py.

Select with HYPOTHESIS_PROFILE=slow (the benchmark script sets it)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,  # CI runs are reproducible; the slow profile explores randomly
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "slow",
    max_examples=5_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
