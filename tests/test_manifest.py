from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.errors import FormatError, LimitExceededError, UnsafePathError
from ontoskills.intents import parse_intents
from ontoskills.manifest import cap_tier, parse_index, parse_manifest


def _index(*entries: dict) -> bytes:
    return json.dumps({"packages": list(entries)}).encode()


def test_index_tiers_and_variants() -> None:
    idx = parse_index(
        _index(
            {
                "package_id": "a/b",
                "trust_tier": "official",
                "manifest_path": "packages/a/b/package.json",
            },
            {"package_id": "c/d", "manifest_path": "packages/c/d/package.json"},
            {
                "package_id": "e/f",
                "trust_tier": "gold",
                "manifest_path": "packages/e/f/package.json",
            },
            {"package_id": "g.h", "manifest_url": "packages/g/h/package.json"},
            {
                "package_id": "i/j",
                "manifest_url": "https://reg.example/store/packages/i/j/package.json",
            },
        ),
        source="index.json",
        base_url="https://reg.example/store/",
    )
    tiers = {e.package_id: e.trust_tier for e in idx}
    assert tiers == {
        "a/b": "official",
        "c/d": "community",
        "e/f": "community",
        "g/h": "community",
        "i/j": "community",
    }
    assert idx.get("i/j").manifest_path == "packages/i/j/package.json"
    assert idx.get("a/b").package_root == "packages/a/b"
    assert any("g.h" in w for w in idx.warnings)


@pytest.mark.parametrize(
    "entry",
    [
        {"package_id": "a/b", "manifest_path": "../../etc/package.json"},
        {"package_id": "a/b", "manifest_path": "/abs/package.json"},
        {"package_id": "a/b", "manifest_url": "https://evil.example/packages/a/b/package.json"},
        {"package_id": "A/b", "manifest_path": "packages/a/b/package.json"},
        {"package_id": "a/b/c", "manifest_path": "x/package.json"},
    ],
)
def test_index_unsafe_entries(entry: dict) -> None:
    with pytest.raises(UnsafePathError):
        parse_index(_index(entry), source="index.json", base_url="https://reg.example/store/")


@pytest.mark.parametrize(
    "data",
    [
        b'{"packages": [}',
        b'{"packages": [], "packages": []}',
        b"\xff\xfe{}",
        b'{"packages": 3}',
        b"[" * 5000 + b"]" * 5000,
        b'{"packages": [{"package_id": "a/b", "manifest_path": 7}]}',
        b'{"packages": [NaN]}',
    ],
)
def test_index_malformed(data: bytes) -> None:
    with pytest.raises(FormatError):
        parse_index(data, source="index.json")


def _manifest(**over: object) -> bytes:
    base = {
        "package_id": "a/b",
        "version": "1.0.0",
        "trust_tier": "official",
        "modules": ["s/ontoskill.ttl"],
        "embedding_files": ["s/intents.json"],
        "skills": [
            {
                "id": "s",
                "path": "s/ontoskill.ttl",
                "aliases": [],
                "description": "d",
                "depends_on_skills": ["ontoskills-other"],
            }
        ],
    }
    base.update(over)
    return json.dumps(base).encode()


def test_manifest_basics() -> None:
    m = parse_manifest(_manifest(), source="package.json", expected_id="a/b")
    assert m.declared_tier == "official"
    assert m.skills[0].depends_on == ("other",)
    assert m.skills[0].dir == "s"
    assert m.files is None
    assert "s/intents.json" in m.listed_paths()


def test_manifest_must_match_index_id() -> None:
    with pytest.raises(FormatError, match="does not match"):
        parse_manifest(_manifest(), source="package.json", expected_id="x/y")


@pytest.mark.parametrize(
    ("over", "exc"),
    [
        ({"modules": ["../../x.ttl"]}, UnsafePathError),
        ({"embedding_files": ["/abs.json"]}, UnsafePathError),
        ({"skills": [{"id": "s", "path": "a\\b.ttl"}]}, UnsafePathError),
        ({"skills": [{"id": "../s", "path": "s.ttl"}]}, UnsafePathError),
        (
            {"files": [{"path": "https://other/x.ttl", "sha256": "0" * 64, "size": 1}]},
            UnsafePathError,
        ),
        ({"files": [{"path": "x", "sha256": "xyz", "size": 1}]}, FormatError),
        ({"files": [{"path": "x", "sha256": "0" * 64, "size": 10**12}]}, LimitExceededError),
        ({"skills": [{"id": "s", "path": "s.ttl"}, {"id": "s", "path": "t.ttl"}]}, FormatError),
        ({"version": None}, FormatError),
        ({"skills": "nope"}, FormatError),
    ],
)
def test_manifest_refusals(over: dict, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        parse_manifest(_manifest(**over), source="package.json")


def test_intents_validation() -> None:
    good = {
        "model": "m",
        "dimension": 2,
        "intents": [{"intent": "x", "embedding": [0.6, 0.8], "skills": ["s"]}],
    }
    assert parse_intents(json.dumps(good).encode(), source="i").intents[0].skills == ("s",)
    bad = dict(good, intents=[{"intent": "x", "embedding": [1.0], "skills": []}])
    with pytest.raises(FormatError, match="dimension"):
        parse_intents(json.dumps(bad).encode(), source="i")


def test_cap_tier() -> None:
    assert cap_tier("official", "verified") == "verified"
    assert cap_tier("community", "official") == "community"
    assert cap_tier("official", None) == "official"


def test_real_ontostore_parses(ontostore: Path) -> None:
    idx = parse_index((ontostore / "index.json").read_bytes(), source="index.json")
    assert len(idx) == 6
    total = 0
    for entry in idx:
        m = parse_manifest(
            (ontostore / entry.manifest_path).read_bytes(), source="m", expected_id=entry.package_id
        )
        total += len(m.skills)
        for rel in m.embedding_files:
            parse_intents((ontostore / entry.package_root / rel).read_bytes(), source=rel)
    assert total == 51
