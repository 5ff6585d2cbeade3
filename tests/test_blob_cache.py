"""paths.Cache: the one writer and the verified readers of the content-addressed blob cache
(install/fetch.py and sources/http.py both go through it)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from ontoskills.paths import Cache


def blob_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_threads_storing_the_same_blob_never_fail_or_leave_temp_files(tmp_path: Path) -> None:
    """Two files with equal content in one package are fetched by parallel workers, and each
    stores its blob. The old fetch.py writer used one temp name per process and sha: a
    second thread truncated the first one's temp file, and the first's rename then failed
    with FileNotFoundError (an install failing for nothing)."""
    data = os.urandom(1 << 20)
    sha = blob_of(data)
    errors: list[BaseException] = []
    for round_ in range(10):
        cache = Cache(tmp_path / f"cache{round_}")
        staged = []
        for i in range(8):
            staged.append(tmp_path / f"staged-{round_}-{i}")
            staged[-1].write_bytes(data)
        barrier = threading.Barrier(len(staged))

        def store(path: Path, cache: Cache = cache, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                cache.store_blob(sha, path)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=store, args=(p,)) for p in staged]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert cache.blob(sha).read_bytes() == data
        assert list(cache.tmp.iterdir()) == []
    assert errors == []


def test_bytes_that_do_not_match_their_name_are_not_stored(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.store_blob(blob_of(b"right"), b"wrong")
    staged = tmp_path / "staged"
    staged.write_bytes(b"wrong too")
    cache.store_blob(blob_of(b"right"), staged)
    assert not cache.blob(blob_of(b"right")).exists()
    assert list(cache.tmp.iterdir()) == []


def test_readers_verify_and_drop_damaged_blobs(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    data = b"skill bytes\n" * 1000
    sha = blob_of(data)
    dest = tmp_path / "dest"
    assert cache.read_blob(sha) is None and cache.copy_blob(sha, dest) is None
    assert not dest.exists()  # an absent blob does not touch the destination
    cache.store_blob(sha, data)
    assert cache.read_blob(sha) == data
    assert cache.copy_blob(sha, dest) == len(data) and dest.read_bytes() == data
    cache.blob(sha).write_bytes(b"bit rot")
    assert cache.copy_blob(sha, dest) is None
    assert not cache.blob(sha).exists()  # dropped: the next fetch stores a good one
    cache.store_blob(sha, data)
    cache.blob(sha).write_bytes(b"bit rot")
    assert cache.read_blob(sha) is None and not cache.blob(sha).exists()


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    with pytest.raises(FileNotFoundError):
        cache.store_blob(blob_of(b"x"), tmp_path / "vanished")  # the staged file is gone
    assert list(cache.tmp.iterdir()) == [] and not cache.blob(blob_of(b"x")).exists()
    entry = cache.http_dir / "meta.json"
    cache.write(entry, b"{}")
    cache.write(entry, b'{"etag": "x"}')
    assert entry.read_bytes() == b'{"etag": "x"}' and list(cache.tmp.iterdir()) == []


@pytest.mark.parametrize("plant", ["fifo", "dev-zero", "folder"])
def test_a_blob_that_is_not_a_regular_file_is_dropped_not_read(tmp_path: Path, plant: str) -> None:
    """The cache is untrusted input: a blob planted as a FIFO blocked open() forever, and one
    linked to /dev/zero was read (read_blob) or copied (copy_blob) without end."""
    data = b"the real bytes\n"
    sha = blob_of(data)
    cache = Cache(tmp_path / "cache")
    for reader in ("read", "copy"):
        blob = cache.blob(sha)
        blob.parent.mkdir(parents=True, exist_ok=True)
        if plant == "fifo":
            os.mkfifo(blob)
        elif plant == "dev-zero":
            blob.symlink_to("/dev/zero")
        else:
            blob.mkdir()
        result: list[object] = []

        def use(reader: str = reader, result: list[object] = result) -> None:
            if reader == "read":
                result.append(cache.read_blob(sha))
            else:
                result.append(cache.copy_blob(sha, tmp_path / "dest"))

        worker = threading.Thread(target=use, daemon=True)
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), f"{reader}_blob hung on a {plant} blob"
        assert result == [None]
        if plant != "folder":  # a planted folder is left for doctor; it is never read
            assert not os.path.lexists(blob)
        elif blob.is_dir():
            blob.rmdir()
    cache.store_blob(sha, data)  # the real blob can be stored and read again
    assert cache.read_blob(sha) == data
