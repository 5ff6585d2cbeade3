"""`build_in_child` (the server's mode): a missing snapshot is built by a real child process
(search/rebuild.py) and read back; a tree caught changing keeps the current view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ontoskills.catalog import live
from ontoskills.paths import Home
from ontoskills.search import rebuild
from tests.helpers.skills import installed_home, service

LOCAL_SKILL = (
    "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
    "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
    'oc:skill_mine a oc:Skill ; dcterms:identifier "mine" ; oc:hasDescription "Mine" .\n'
)


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Home:
    installed_home(tmp_path_factory, env)
    return Home.resolve(env["ONTOSKILLS_HOME"])


def _snapshots(home: Home) -> list[Path]:
    return sorted((home.derived_dir / "search-index").glob("index-*.json"))


def _add_local_skill(home: Home, name: str = "mine") -> None:
    folder = home.ontologies / name / "own"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(LOCAL_SKILL.replace("mine", name).replace("Mine", name))


def test_the_child_builds_and_the_service_reads_the_snapshot(
    home: Home, env: dict[str, str]
) -> None:
    svc = service(env, build_in_child=True)
    view = svc.catalog.view
    assert view.rebuilt is True
    assert view.data.bodies is None  # read back from a snapshot: nothing was parsed here
    assert len(_snapshots(home)) == 1
    assert svc.search("find the root cause of failing tests").results[0].skill == (
        "acme/devtools/debugging"
    )
    _add_local_skill(home)
    assert svc.refresh() is True
    assert svc.catalog.view.data.bodies is None
    assert svc.resolve("mine") == "local/mine/mine"
    # the same answers as a service that built in-process
    here = service(env)
    assert here.catalog.view.data.bodies is None  # the child's snapshot serves it too
    assert [r.key for r in here.state.data.records] == [r.key for r in svc.state.data.records]


def test_a_tree_being_changed_keeps_the_current_view_until_it_settles(
    home: Home, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = service(env, build_in_child=True)
    old = svc.catalog.view
    journal = home.staging_dir / "txn" / "journal.json"  # an install under way
    journal.parent.mkdir(parents=True)
    journal.write_text('{"state": "swapping"}')
    _add_local_skill(home)
    assert svc.refresh() is False  # the child saw a tree being changed: saved nothing
    assert svc.catalog.view is old and svc.resolve("mine") is None
    assert svc.refresh() is False and svc.catalog.view is old  # no new child at once
    journal.unlink()
    monkeypatch.setattr(live, "RETRY_MOVED", 0.0)
    assert svc.refresh() is True
    assert svc.resolve("mine") == "local/mine/mine" and svc.catalog.view.data.bodies is None


def test_the_first_view_is_built_here_when_the_child_cannot_save(
    home: Home, env: dict[str, str]
) -> None:
    journal = home.staging_dir / "txn" / "journal.json"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"state": "swapping"}')
    svc = service(env, build_in_child=True)
    assert svc.catalog.view.data.bodies is not None  # no snapshot: built in this process
    assert _snapshots(home) == [] and len(svc.skills()) > 0


def test_a_change_landing_while_the_child_builds_is_caught_up_with(
    home: Home, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Back-to-back installs: the tree changes again between the stat that started a reload
    and the child's build. The child saves the newer tree; the reload serves it at once (it
    used to wait for a quiet moment that continuous installs never leave)."""
    real = rebuild.rebuild_elsewhere
    calls: list[int] = []

    def racing(*args: Any) -> bool:
        calls.append(1)
        if len(calls) == 2:  # the reload below, not the first view's build
            _add_local_skill(home, "later")
        return real(*args)

    monkeypatch.setattr(rebuild, "rebuild_elsewhere", racing)
    svc = service(env, build_in_child=True)
    _add_local_skill(home)
    assert svc.refresh() is True
    assert len(calls) == 2  # the child's snapshot was read back, not built a second time
    assert svc.resolve("mine") == "local/mine/mine"
    assert svc.resolve("later") == "local/later/later"
    assert svc.catalog.view.data.bodies is None
    assert svc.refresh() is False  # the served view is the tree as it is now
