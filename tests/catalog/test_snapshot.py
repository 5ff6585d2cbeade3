"""catalog/snapshot.py: the arrays are memory-mapped, read as untrusted, and a snapshot in use
survives the next save. The service over a damaged snapshot: test_catalog.py, test_body.py."""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import numpy as np
import pytest

from ontoskills.catalog.model import CatalogData, SkillRecord
from ontoskills.catalog.snapshot import load_snapshot, save_snapshot
from tests.helpers.skills import installed_home, service

KEY = "k" * 32


def _data(tree: Path, n: int = 3, seed: float = 0.0) -> CatalogData:
    records = [
        SkillRecord(
            key=f"acme/kit/s{i}",
            package="acme/kit",
            skill_id=f"s{i}",
            identifier=f"s{i}",
            iri=f"https://example.test/s{i}",
            trust_tier="verified",
            root=str(tree / "author/acme/kit"),
            main_module=f"s{i}/ontoskill.ttl",
        )
        for i in range(n)
    ]
    vectors = np.arange(2 * n * 4, dtype=np.float32).reshape(2 * n, 4) + seed
    return CatalogData(
        records=records,
        vectors=vectors,
        vector_owner=np.repeat(np.arange(n, dtype=np.int32), 2),
        vector_text=[f"intent {i}" for i in range(2 * n)],
        vector_model="tiny",
        problems=[],
        schema={},
        bm25_terms=["alpha", "beta"],
        bm25_arrays={
            "offsets": np.array([0, 1, 3], dtype=np.int64),
            "ids": np.array([0, 1, 2], dtype=np.int32),
            "weights": np.array([0.5, 1.5, 2.5], dtype=np.float32) + seed,
            "header": np.array([True, False, True]),
        },
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return tmp_path / "ontologies"


@pytest.fixture
def derived(tmp_path: Path) -> Path:
    return tmp_path / "derived"


def _files(derived: Path) -> tuple[Path, Path]:
    folder = derived / "search-index"
    return folder / f"index-{KEY}.json", folder / f"index-{KEY}.arrays"


def _mapped(a: np.ndarray) -> bool:
    base: object = a
    while isinstance(base, (np.ndarray, memoryview)):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return isinstance(base, mmap.mmap)


def test_arrays_come_back_equal_read_only_and_mapped(tree: Path, derived: Path) -> None:
    data = _data(tree)
    save_snapshot(derived, KEY, data)
    got = load_snapshot(derived, KEY, tree=tree)
    assert got is not None and [r.key for r in got.records] == [r.key for r in data.records]
    assert np.array_equal(got.vectors, data.vectors) and got.vectors.dtype == np.float32
    assert np.array_equal(got.vector_owner, data.vector_owner)
    assert got.bm25_terms == ["alpha", "beta"] and got.bm25_arrays is not None
    for name, arr in (data.bm25_arrays or {}).items():
        assert (
            np.array_equal(got.bm25_arrays[name], arr) and got.bm25_arrays[name].dtype == arr.dtype
        )
    # On the file's pages, not the heap: a reload leaves nothing behind when its view goes.
    for arr in (got.vectors, got.vector_owner, *got.bm25_arrays.values()):
        assert _mapped(arr) and not arr.flags.writeable
    with pytest.raises(ValueError):
        got.vectors[0, 0] = 1.0


def test_an_empty_catalog_round_trips(tree: Path, derived: Path) -> None:
    empty = CatalogData(
        records=[],
        vectors=np.zeros((0, 0), np.float32),
        vector_owner=np.zeros(0, np.int32),
        vector_text=[],
        vector_model=None,
        problems=["nothing installed"],
        schema={},
    )
    save_snapshot(derived, KEY, empty)
    got = load_snapshot(derived, KEY, tree=tree)
    assert got is not None and got.vectors.shape == (0, 0) and got.problems == empty.problems


def test_a_snapshot_in_use_keeps_its_bytes_when_the_next_is_saved(
    tree: Path, derived: Path
) -> None:
    save_snapshot(derived, KEY, _data(tree))
    in_use = load_snapshot(derived, KEY, tree=tree)
    assert in_use is not None
    before = in_use.vectors.copy(), dict((in_use.bm25_arrays or {}).items())
    before_weights = before[1]["weights"].copy()
    _, arrays = _files(derived)
    inode = arrays.stat().st_ino
    save_snapshot(derived, KEY, _data(tree, seed=100.0))  # same key, other bytes: replaced
    assert arrays.stat().st_ino != inode  # a new file, never rewritten in place
    fresh = load_snapshot(derived, KEY, tree=tree)
    assert fresh is not None and float(fresh.vectors[0, 0]) == 100.0
    save_snapshot(derived, "n" * 32, _data(tree, seed=7.0))  # another key: the old is deleted
    assert not arrays.exists()
    assert np.array_equal(in_use.vectors, before[0])  # the old mapping, the old inode
    assert np.array_equal((in_use.bm25_arrays or {})["weights"], before_weights)


def _tamper_layout(derived: Path, name: str, entry: object) -> None:
    meta, _ = _files(derived)
    doc = json.loads(meta.read_text())
    doc["arrays"][name] = entry
    meta.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("vectors", ["|O", [6, 4], 0]),  # an object dtype: never read
        ("vectors", ["<f8", [6, 4], 0]),  # a dtype we never write
        ("vectors", ["<f4", [6, 4], 32]),  # not 64-byte aligned
        ("vectors", ["<f4", [6, 4], 1 << 40]),  # past the end of the file
        ("vectors", ["<f4", [600, 4], 0]),  # runs past the end of the file
        ("vectors", ["<f4", [-6, -4], 0]),
        ("vectors", ["<f4", [6, 4, 1], 0]),
        ("vectors", ["<f4", [6, 4], "0"]),
        ("vectors", ["<f4", [6, True], 0]),
        ("vectors", ["<i4", [6, 4], 0]),  # not float32 vectors
        ("vectors", "<f4"),
        ("vector_owner", ["<i4", [5], 128]),  # one owner short of the vectors
    ],
)
def test_a_tampered_layout_is_a_miss(tree: Path, derived: Path, name: str, entry: object) -> None:
    save_snapshot(derived, KEY, _data(tree))
    _tamper_layout(derived, name, entry)
    assert load_snapshot(derived, KEY, tree=tree) is None


def test_vectors_owned_by_no_record_are_a_miss(tree: Path, derived: Path) -> None:
    data = _data(tree)
    data.vector_owner = data.vector_owner + 1  # the last two rows name record 3 of 3
    save_snapshot(derived, KEY, data)
    assert load_snapshot(derived, KEY, tree=tree) is None


@pytest.mark.parametrize("change", ["truncate", "extend", "empty"])
def test_an_arrays_file_of_another_size_is_a_miss(tree: Path, derived: Path, change: str) -> None:
    save_snapshot(derived, KEY, _data(tree))
    _, arrays = _files(derived)
    blob = arrays.read_bytes()
    arrays.write_bytes({"truncate": blob[:-1], "extend": blob + b"\0", "empty": b""}[change])
    assert load_snapshot(derived, KEY, tree=tree) is None


def test_a_symlink_or_fifo_in_place_of_the_arrays_is_a_miss(
    tree: Path, derived: Path, tmp_path: Path
) -> None:
    save_snapshot(derived, KEY, _data(tree))
    _, arrays = _files(derived)
    real = tmp_path / "elsewhere.arrays"
    os.replace(arrays, real)
    arrays.symlink_to(real)  # the same bytes, but not the home's own file
    assert load_snapshot(derived, KEY, tree=tree) is None
    arrays.unlink()
    os.mkfifo(arrays)  # would block a plain open() for ever
    assert load_snapshot(derived, KEY, tree=tree) is None


def test_a_truncated_snapshot_is_rebuilt_never_served(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]
) -> None:
    installed_home(tmp_path_factory, env)
    first = service(env)  # writes the snapshot (with its BM25 postings)
    home = first.catalog.home
    (arrays,) = (home.derived_dir / "search-index").glob("index-*.arrays")
    whole = arrays.read_bytes()
    arrays.write_bytes(whole[: len(whole) // 2])
    again = service(env)
    assert again.catalog.view.rebuilt is True
    assert again.state.data.bodies is not None  # parsed from the tree, not the half file
    assert again.skills() == first.skills()
    ranked = [r.skill for r in first.search("planning", mode="bm25").results]
    assert ranked and [r.skill for r in again.search("planning", mode="bm25").results] == ranked
    (rewritten,) = (home.derived_dir / "search-index").glob("index-*.arrays")
    assert rewritten.read_bytes() == whole  # saved again, whole
    assert service(env).catalog.view.rebuilt is False  # the rebuilt snapshot is read again


def test_vectors_are_stored_grouped_by_skill_and_searched_without_a_copy(
    tree: Path, derived: Path
) -> None:
    from ontoskills.search.semantic import SemanticIndex

    data = _data(tree)
    shuffle = np.array([4, 0, 5, 2, 1, 3])  # rows of skills 2, 0, 2, 1, 0, 1
    data.vectors = data.vectors[shuffle]
    data.vector_owner = data.vector_owner[shuffle]
    data.vector_text = [data.vector_text[i] for i in shuffle]
    save_snapshot(derived, KEY, data)
    got = load_snapshot(derived, KEY, tree=tree)
    assert got is not None and got.vector_owner.tolist() == [0, 0, 1, 1, 2, 2]
    # Each row keeps its own text and owner (a skill's intents in their stored order).
    assert got.vector_text == [
        "intent 0",
        "intent 1",
        "intent 2",
        "intent 3",
        "intent 4",
        "intent 5",
    ]
    for row, text in enumerate(got.vector_text):
        i = data.vector_text.index(text)
        assert np.array_equal(got.vectors[row], data.vectors[i])
    index = SemanticIndex(got.vectors, got.vector_owner, len(got.records))
    assert np.shares_memory(index.vectors, got.vectors) and _mapped(index.vectors)
    built = SemanticIndex(data.vectors, data.vector_owner, len(data.records))
    q = np.ones(4, dtype=np.float32)
    assert np.array_equal(
        index.best_per_skill(index.similarities(q)), built.best_per_skill(built.similarities(q))
    )
    sims, built_sims = index.similarities(q), built.similarities(q)
    for skill in range(3):
        assert [got.vector_text[r] for r in index.top_rows(sims, skill)] == [
            data.vector_text[r] for r in built.top_rows(built_sims, skill)
        ]


def test_a_lock_read_back_from_the_cache_is_the_parsed_lock(tmp_path: Path) -> None:
    """The JSON lock cache gives the records' own types back (a RegistryKind, a tuple of
    root keys), not JSON's strings and lists: the same Lockfile lockfile.parse makes."""
    from ontoskills import lockfile
    from ontoskills.catalog.lockcache import load_lock
    from ontoskills.registries import RegistryKind

    path = tmp_path / "ontoskills.lock"
    lock = lockfile.Lockfile()
    lock.registries["r"] = lockfile.LockedRegistry(
        "r", RegistryKind.GIT, "https://example.invalid/r.git", signed=True, root_keys=("a" * 64,)
    )
    lockfile.write(lock, path)
    first, _ = load_lock(path, tmp_path / "derived")  # parsed, then cached
    cached, _ = load_lock(path, tmp_path / "derived")  # read back from the cache
    assert (tmp_path / "derived" / "lock-cache").is_dir()
    assert cached == first == lockfile.load(path)
    assert type(cached.registries["r"].kind) is RegistryKind
    assert cached.registries["r"].root_keys == ("a" * 64,)
