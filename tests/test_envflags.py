"""One truthiness rule for flag variables (envvars.flag), used by CI and ONTOSKILLS_OFFLINE."""

from __future__ import annotations

import pytest

from ontoskills import envvars


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on", "woodpecker", " 1 "])
def test_on(value: str) -> None:
    assert envvars.flag("X", {"X": value})


@pytest.mark.parametrize("value", ["", "0", "false", "False", "no", "OFF", "  "])
def test_off(value: str) -> None:
    assert not envvars.flag("X", {"X": value})


def test_unset_is_off() -> None:
    assert not envvars.flag("X", {})


def test_offline_and_ci_read_the_same_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ONTOSKILLS_OFFLINE=on` was ignored while `CI=on` counted: two rules for one idea."""
    from ontoskills.commands._context import AppContext, in_ci

    monkeypatch.setenv("CI", "on")
    monkeypatch.setenv("ONTOSKILLS_OFFLINE", "on")
    assert in_ci()
    assert AppContext().source_options().offline
