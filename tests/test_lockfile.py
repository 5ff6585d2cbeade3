from __future__ import annotations

from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.errors import LockFormatError, LockMissingError
from ontoskills.lockfile import LockedFile, LockedPackage, LockedRegistry, Lockfile


def _lock(tmp_path: Path) -> Lockfile:
    files = [
        LockedFile("b.ttl", "b" * 64, 2, False),
        LockedFile("a/run.sh", "a" * 64, 1, True),
    ]
    return Lockfile(
        registries={
            "local": LockedRegistry("local", "folder", str(tmp_path / "reg"), index_sha256="c" * 64)
        },
        packages={
            "x/y": LockedPackage(
                id="x/y",
                version="1.0",
                registry="local",
                trust_tier="official",
                requested=["x/y"],
                files=files,
                skills={"s2": False, "s1": True},
            )
        },
    )


def test_roundtrip_is_canonical_and_portable(tmp_path: Path) -> None:
    path = tmp_path / "proj" / "ontoskills.lock"
    lock = _lock(tmp_path)
    lockfile.write(lock, path)
    data = path.read_bytes()
    assert b"\r" not in data
    assert str(tmp_path).encode() not in data  # no absolute paths
    assert b'url = "../reg"' in data
    again = lockfile.load(path)
    assert again.registries["local"].url == str((tmp_path / "reg").resolve())
    assert [f.path for f in again.packages["x/y"].files] == ["a/run.sh", "b.ttl"]
    lockfile.write(again, path)
    assert path.read_bytes() == data  # byte-identical rewrite


def test_missing_lock(tmp_path: Path) -> None:
    assert lockfile.load(tmp_path / "none.lock").packages == {}
    with pytest.raises(LockMissingError):
        lockfile.load(tmp_path / "none.lock", required=True)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("lock_version = 1\n<<<<<<< HEAD\n=======\n>>>>>>> other\n", "merge-conflict"),
        ("lock_version = 99\n", "unsupported lock_version"),
        ("lock_version = \n", "invalid TOML"),
        ('lock_version = 1\n[packages."x/y"]\ntrust_tier = "godlike"\n', "trust_tier"),
    ],
)
def test_bad_locks_name_the_file(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "ontoskills.lock"
    path.write_text(text)
    with pytest.raises(LockFormatError, match=match) as info:
        lockfile.load(path)
    assert str(path) in str(info.value)


def test_hand_edited_hash_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "ontoskills.lock"
    lockfile.write(_lock(tmp_path), path)
    path.write_text(path.read_text().replace("b" * 64, "d" * 64))
    with pytest.raises(LockFormatError, match="integrity"):
        lockfile.load(path)
