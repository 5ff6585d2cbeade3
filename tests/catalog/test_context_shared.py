"""Every skill of the full public registry (../shared/ontostore-full: 103 packages, 626 skills,
all enabled): the overview and every page of every part fit the default budget, and walking
the parts from the index reaches every piece of content `show --json` has. Skipped without
../shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from ontoskills.catalog.disclosure import json_chars
from ontoskills.config import DEFAULT_CONTEXT_BUDGET
from tests.conftest import CliRunner, shared_path
from tests.helpers.context import walk
from tests.helpers.skills import service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


pytestmark = pytest.mark.shared


def test_budget_and_reachability_on_every_real_skill(cli: CliRunner, env: dict[str, str]) -> None:
    store = shared_path("ontostore-full", "index.json").parent
    ids = [e["package_id"] for e in json.loads((store / "index.json").read_text())["packages"]]
    cli("--registry", str(store), "install", *ids, "--quiet", check=True, timeout=600)
    cli("enable", *ids, "--quiet", check=True, timeout=600)
    svc = service(env, verify="none")
    keys = [s.key for s in svc.skills()]
    assert len(keys) == 626

    budget = DEFAULT_CONTEXT_BUDGET
    over: list[tuple[str, int]] = []
    lost: list[tuple[str, str]] = []
    whole = 0
    for key in keys:

        async def call(q: str, key: str = key) -> tuple[str, dict[str, Any], bool]:
            _, part = svc.resolve_context(q) or (None, None)
            a = svc.skill_answer(key, part, budget=budget)
            return a.text, a.structured, False

        seen = anyio.run(walk, call, key, lambda t, d: len(t) + json_chars(d))
        over.extend((key, s) for s in seen.sizes if s > budget)
        lost.extend((key, f[:60]) for f in seen.missing(svc.context(key).to_json()))
        whole += bool(seen.overview_structured["complete"])
        svc.state.cache.clear()  # keep memory flat over 626 skills
    assert over == []
    assert lost == []
    assert 0 < whole < len(keys)  # small skills come whole, large ones as an overview
    assert Path(env["ONTOSKILLS_HOME"]).is_dir()
