"""Contexts and their split answers are kept within a byte budget (search/cache.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoskills.search import cache
from ontoskills.search.cache import WeightedLRU
from tests.helpers.skills import installed_home, service

KEYS = [
    "acme/devtools/debugging",
    "acme/devtools/planning",
    "acme/devtools/pdf",
    "acme/devtools/video-frames",
]


def test_least_recently_used_go_first_by_weight() -> None:
    lru = WeightedLRU(budget=100)
    lru.put("a", 1, 40)
    lru.put("b", 2, 40)
    assert lru.get("a") == 1  # a is now the most recent
    lru.put("c", 3, 40)  # 120 > 100: b goes
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3
    assert lru.weight == 80
    lru.put("a", 9, 10)  # replacing an entry re-weighs it
    assert lru.weight == 50 and lru.get("a") == 9


def test_the_newest_entry_stays_even_over_budget() -> None:
    lru = WeightedLRU(budget=100)
    lru.put("small", 1, 10)
    lru.put("huge", 2, 500)
    assert len(lru) == 1 and lru.get("huge") == 2 and lru.weight == 500


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


def test_service_keeps_answers_within_the_budget_and_reparses_evicted_ones(
    installed: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = {k: service(env).skill_answer(k).text for k in KEYS}  # reference, default budget
    weights = []
    svc = service(env)
    for k in KEYS:
        svc.skill_answer(k)
        weights.append(svc.state.cache.weight)
    assert len(svc.state.cache) == len(KEYS)  # all fit in the default budget

    monkeypatch.setattr(cache, "CACHE_BYTES", max(weights[0], weights[-1] - weights[-2]) + 1)
    small = service(env)
    for _ in range(2):  # the second round finds evicted skills and parses them again
        for k in KEYS:
            assert small.skill_answer(k).text == first[k]
            assert small.state.cache.weight <= cache.CACHE_BYTES or len(small.state.cache) == 1
    assert len(small.state.cache) < len(KEYS)


def test_a_context_is_weighed_by_what_it_holds(installed: Path, env: dict[str, str]) -> None:
    svc = service(env)
    ctx = svc.context(KEYS[0])
    w = cache.context_weight(ctx)
    assert w > cache.ENTRY_OVERHEAD
    ctx.knowledge.append({"directive": "x" * 100_000})
    assert cache.context_weight(ctx) >= w + 2 * 100_000
