from __future__ import annotations

import os
from pathlib import Path

import pytest

from ontoskills.errors import UnsafePathError, UsageError
from ontoskills.safety import (
    check_name,
    check_relpath,
    find_hidden_unicode,
    parse_spec,
    safe_join,
    split_package_id,
)


@pytest.mark.parametrize(
    "path",
    [
        "../../x.ttl",
        "/abs.ttl",
        "a\\b.ttl",
        "https://other/x.ttl",
        "file:///etc/passwd",
        "C:/x.ttl",
        "a/../b",
        "a//b",
        "./a",
        "a/",
        "",
        "a\x00b",
        "a\nb",
        "x\u202eb.ttl",
        "x" * 2000,
    ],
)
def test_unsafe_relpaths_are_refused(path: str) -> None:
    with pytest.raises(UnsafePathError):
        check_relpath(path)


@pytest.mark.parametrize(
    "path", ["a.ttl", "skill/ontoskill.ttl", "a b/CREATION-LOG.ttl", "x/y/z/intents.json"]
)
def test_safe_relpaths_pass(path: str) -> None:
    assert check_relpath(path) == path


@pytest.mark.parametrize("name", ["Abc", "-a", ".a", "a/b", "", "a" * 65, "ä", None, 3])
def test_bad_names(name: object) -> None:
    with pytest.raises(UnsafePathError):
        check_name(name, "skill id")


def test_good_names() -> None:
    for name in ("pdf", "image_editing", "next.js", "a-b", "0x"):
        assert check_name(name, "id") == name
    assert split_package_id("obra/superpowers") == ("obra", "superpowers")


def test_parse_spec() -> None:
    assert parse_spec("obra/superpowers") == ("obra/superpowers", None)
    assert parse_spec("obra/superpowers/brainstorming") == ("obra/superpowers", "brainstorming")
    for bad in ("obra", "obra/", "a/b/c/d", "Obra/x", "../x"):
        with pytest.raises(UsageError):
            parse_spec(bad)


def test_safe_join_refuses_symlinked_parent(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "link")
    with pytest.raises(UnsafePathError):
        safe_join(root, "link/x.ttl")
    assert safe_join(root, "ok/x.ttl") == root / "ok" / "x.ttl"


def test_hidden_unicode() -> None:
    assert find_hidden_unicode("plain text") == []
    assert find_hidden_unicode("a\u200bb\U000e0041") == ["U+200B", "U+E0041"]
