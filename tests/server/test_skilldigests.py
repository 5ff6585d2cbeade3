"""The generated-file digest cache's delete (server/skilldigests.py): it removes only the
file it wrote for a key, inside its own folder, and never deletes through a planted link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ontoskills.errors import UnsafePathError
from ontoskills.fsutil import guard_root
from ontoskills.server.skilldigests import DigestCache

MANIFEST = [("SKILL.md", "0" * 64, 12)]


def test_forget_removes_only_the_file_it_wrote_for_that_key(tmp_path: Path) -> None:
    derived = tmp_path / "home/state/derived"
    cache = DigestCache(derived)
    for key in ("a/b/c", "a/b/d", "../../../outside", "/etc/passwd"):
        cache.put(key, "f1", MANIFEST)
    written = sorted(cache.folder.iterdir())
    assert len(written) == 4 and all(p.parent == cache.folder for p in written)
    assert not (tmp_path / "outside").exists()  # a hostile key is a hash, not a path
    user_file = cache.folder / "notes.json"
    user_file.write_text("mine")
    cache.forget("a/b/c")
    cache.forget("../../../outside")
    assert cache.get("a/b/c", "f1") is None
    left = {p.name for p in cache.folder.iterdir()}
    assert left == {
        "notes.json",
        cache._cache_file("a/b/d").name,
        cache._cache_file("/etc/passwd").name,
    }
    assert DigestCache(derived).get("a/b/d", "f1") == MANIFEST  # the others stay on disk


def test_forget_never_deletes_through_a_symlinked_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    derived = home / "state/derived"
    derived.mkdir(parents=True)
    guard_root(home)  # as the CLI guards the home it was given
    outside = tmp_path / "outside"
    outside.mkdir()
    cache = DigestCache(derived)
    victim = outside / cache._cache_file("a/b/c").name
    victim.write_text("not ours")
    os.symlink(outside, cache.folder)  # planted by whoever else writes the home
    with pytest.raises(UnsafePathError):
        cache.forget("a/b/c")
    assert victim.read_text() == "not ours"
