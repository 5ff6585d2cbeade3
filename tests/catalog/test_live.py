"""catalog/live.py on its own (no search on top): when a view is rebuilt, read back or kept,
and which encoder each view uses. SkillService's behaviour over it: test_catalog.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ontoskills.catalog.live import LiveCatalog
from ontoskills.catalog.model import CatalogData
from ontoskills.config import load_config
from ontoskills.embeddings.encoder import Encoder
from ontoskills.embeddings.model import load_encoder
from ontoskills.paths import Home
from tests.helpers.skills import installed_home
from tests.helpers.tinymodel import build_tiny_model

LOCAL_SKILL = (
    "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
    "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
    'oc:skill_mine a oc:Skill ; dcterms:identifier "mine" ; oc:hasDescription "{}" .\n'
)


class Recorder:
    """The consumer's index: records how it was asked (from the snapshot or the tree)."""

    def __init__(self, accept_snapshot: bool = True) -> None:
        self.accept_snapshot = accept_snapshot
        self.calls: list[tuple[int, bool]] = []

    def __call__(self, data: CatalogData, fresh: bool) -> list[str] | None:
        self.calls.append((len(data.records), fresh))
        if not fresh and not self.accept_snapshot:
            return None
        return [r.key for r in data.records]


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Home:
    installed_home(tmp_path_factory, env)
    return Home.resolve(env["ONTOSKILLS_HOME"])


def open_catalog(home: Home, index: Recorder, **kwargs: object) -> LiveCatalog[list[str]]:
    config = load_config(home.config_file)
    return LiveCatalog(home, home.default_lockfile, config, index=index, **kwargs)  # type: ignore[arg-type]


def test_the_first_open_builds_and_the_next_reads_the_snapshot(home: Home) -> None:
    first = Recorder()
    cat = open_catalog(home, first)
    assert cat.view.rebuilt is True and first.calls == [(6, True)]
    assert cat.view.data.bodies is not None  # built from the Turtle
    again = Recorder()
    reread = open_catalog(home, again)
    assert reread.view.rebuilt is False and again.calls == [(6, False)]
    assert reread.view.data.bodies is None  # the snapshot keeps postings, not body text
    assert reread.view.index == cat.view.index


def test_a_snapshot_the_index_refuses_is_rebuilt_from_the_tree(home: Home) -> None:
    open_catalog(home, Recorder())  # writes the snapshot
    picky = Recorder(accept_snapshot=False)
    cat = open_catalog(home, picky)
    assert picky.calls == [(6, False), (6, True)]
    assert cat.view.rebuilt is True and cat.view.data.bodies is not None


def test_refresh_reads_nothing_until_the_signature_changes(home: Home) -> None:
    index = Recorder()
    cat = open_catalog(home, index, verify="none")
    old = cat.view
    assert cat.refresh() is False and cat.refresh() is False
    assert index.calls == [(6, True)] and cat.view is old
    folder = home.ontologies / "mine" / "own"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(LOCAL_SKILL.format("mine"))
    assert cat.refresh() is True
    assert index.calls[-1] == (7, True)  # a new key: nothing to read back
    assert "local/mine/mine" in cat.view.index
    assert "local/mine/mine" not in old.index  # a request holding the old view keeps it whole
    assert cat.view.signature != old.signature and cat.view.signature.lock == old.signature.lock


def test_each_view_keeps_the_encoder_of_its_model(home: Home) -> None:
    config = load_config(home.config_file)
    loads: list[Encoder | None] = []

    def factory() -> Encoder | None:
        loads.append(load_encoder(home, config))
        return loads[-1]

    cat = open_catalog(home, Recorder(), encoder_factory=factory)
    before = cat.view
    assert cat.encoder() is None and loads == [None]
    folder = home.ontologies / "mine" / "own"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(LOCAL_SKILL.format("v1"))
    assert cat.refresh() is True
    assert cat.view.encoder is before.encoder and len(loads) == 1  # same model: not reloaded
    build_tiny_model(home.embeddings_dir)  # `install --with-embeddings` in another terminal
    assert cat.refresh() is True
    assert cat.view.signature.model != before.signature.model
    assert isinstance(cat.encoder(), Encoder) and len(loads) == 2
    assert before.encoder.get() is None  # the old view still answers with what it had
    assert cat.encoder() is cat.encoder() and len(loads) == 2  # loaded once per model


def test_a_failed_reload_keeps_the_view_and_says_why(home: Home) -> None:
    cat = open_catalog(home, Recorder())
    old = cat.view
    lock = home.default_lockfile
    good = lock.read_bytes()
    lock.write_bytes(good + b"\n[packages\n")
    assert cat.refresh() is False and cat.refresh() is False
    assert cat.view is old
    assert len([p for p in old.data.problems if "ontoskills.lock" in p]) == 1  # said once
    lock.write_bytes(good + b"\n")
    assert cat.refresh() is True and cat.view.index == old.index


def test_an_unknown_verify_mode_is_a_usage_error(home: Home) -> None:
    from ontoskills.errors import UsageError

    with pytest.raises(UsageError, match="verify"):
        open_catalog(home, Recorder(), verify="some")


def _snapshots(home: Home) -> list[str]:
    folder = home.derived_dir / "search-index"
    return sorted(p.name for p in folder.glob("index-*")) if folder.is_dir() else []


def _journal(home: Home) -> Path:
    """What an install transaction keeps from before its first folder move until after the
    lock is written (install/transaction.py)."""
    path = home.staging_dir / "txn-under-way" / "journal.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"state": "swapping"}')
    return path


def test_a_build_during_a_transaction_is_served_but_not_saved(home: Home) -> None:
    journal = _journal(home)
    cat = open_catalog(home, Recorder())
    assert cat.view.rebuilt is True and len(cat.view.index) == 6  # served
    assert _snapshots(home) == []  # a tree that may be half swapped is never read back
    journal.unlink()
    again = open_catalog(home, Recorder())
    assert again.view.rebuilt is True and len(_snapshots(home)) == 2  # settled: saved


class LockToucher(Recorder):
    """An index whose making is slow enough for an install to land meanwhile: the lock is
    replaced (same bytes, new inode) while the view is built from the tree."""

    def __init__(self, home: Home) -> None:
        super().__init__()
        self.lock = home.default_lockfile
        self.touched = False

    def __call__(self, data: CatalogData, fresh: bool) -> list[str] | None:
        if fresh and not self.touched:
            self.touched = True
            tmp = self.lock.with_name("lock.tmp")
            tmp.write_bytes(self.lock.read_bytes())
            os.replace(tmp, self.lock)
        return super().__call__(data, fresh)


def test_a_lock_replaced_during_the_build_is_not_saved_and_reloads(home: Home) -> None:
    index = LockToucher(home)
    cat = open_catalog(home, index)
    assert index.touched and _snapshots(home) == []
    assert cat.refresh() is True  # the lock it saw is not the lock on disk: built again
    assert len(_snapshots(home)) == 2 and index.calls == [(6, True), (6, True)]
