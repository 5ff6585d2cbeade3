"""Hypothesis strategies for hostile registry input: near-valid documents with poison mixed in.

Purely random bytes almost never get past the JSON parser, so most strategies start from a
valid document and replace fields with hostile values (traversal paths, wrong types, huge
numbers, lone surrogates, hidden Unicode) so the deep validation code is exercised too.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

HOSTILE_PATHS = [
    "../../x.ttl",
    "../x",
    "/abs.ttl",
    "a\\b.ttl",
    "https://other/x.ttl",
    "file:///etc/passwd",
    "C:/x.ttl",
    "c:x",
    "a/../../b",
    "a//b",
    "./a",
    "a/./b",
    "a/",
    "",
    ".",
    "..",
    "a\x00b",
    "a\nb",
    "x\u202eb.ttl",
    "x\u200b.ttl",
    "\U000e0041tag.ttl",
    "x\ud800.ttl",
    "x" * 300,
    "a/" * 600,
    "packages/a/b/../../../../etc/passwd",
    "%2e%2e/x",
    "~/x",
    "con/aux.ttl",
]
HOSTILE_NAMES = [
    "",
    "A",
    "a/b",
    "..",
    ".hidden",
    "-x",
    "x" * 65,
    "аcme",  # Cyrillic a: a confusable
    "acme\u200b",
    "a b",
    "a\x00",
    "\ud800",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
paths = st.one_of(
    st.sampled_from(HOSTILE_PATHS),
    st.text(max_size=30),
    st.from_regex(r"[a-z0-9._/-]{1,30}", fullmatch=True),
)
names = st.one_of(
    st.sampled_from(HOSTILE_NAMES), st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True)
)
anything = st.one_of(json_values, paths)


def _maybe(valid: st.SearchStrategy[Any], poison: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(valid, valid, poison)


def skill_dicts() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "id": _maybe(st.just("s1"), st.one_of(names, json_values)),
            "path": _maybe(st.just("s1/o.ttl"), st.one_of(paths, json_values)),
        },
        optional={
            "depends_on_skills": _maybe(
                st.just(["ontoskills-s2"]), st.lists(st.one_of(names, json_values), max_size=3)
            ),
            "aliases": st.lists(anything, max_size=3),
            "intents": st.lists(anything, max_size=3),
            "default_enabled": anything,
            "description": anything,
            "category": anything,
            "is_user_invocable": anything,
        },
    )


def file_dicts() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"path": _maybe(st.just("LICENSE"), st.one_of(paths, json_values))},
        optional={
            "sha256": _maybe(st.just("0" * 64), anything),
            "size": _maybe(st.integers(0, 10**12), anything),
            "executable": anything,
        },
    )


def manifest_dicts() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "package_id": _maybe(
                st.just("a/b"),
                st.one_of(st.builds(lambda x, y: f"{x}/{y}", names, names), json_values),
            ),
            "version": _maybe(st.just("1.0.0"), anything),
        },
        optional={
            "modules": st.lists(
                _maybe(st.just("s1/o.ttl"), st.one_of(paths, json_values)), max_size=4
            ),
            "embedding_files": st.lists(_maybe(st.just("s1/intents.json"), paths), max_size=3),
            "skills": _maybe(st.lists(skill_dicts(), max_size=3), json_values),
            "files": _maybe(st.lists(file_dicts(), max_size=4), json_values),
            "trust_tier": anything,
            "source_kind": anything,
            "description": anything,
        },
    )


def index_dicts() -> st.SearchStrategy[dict[str, Any]]:
    entry = st.fixed_dictionaries(
        {},
        optional={
            "package_id": _maybe(st.just("a/b"), st.one_of(names, json_values, st.just("a.b"))),
            "manifest_path": _maybe(
                st.just("packages/a/b/package.json"), st.one_of(paths, json_values)
            ),
            "manifest_url": st.one_of(
                st.just("https://reg.example/store/packages/a/b/package.json"),
                st.just("https://evil.example/packages/a/b/package.json"),
                st.just("https://reg.example/store/../x/package.json"),
                paths,
            ),
            "trust_tier": anything,
            "source_kind": anything,
        },
    )
    return st.fixed_dictionaries({"packages": _maybe(st.lists(entry, max_size=4), json_values)})


def intents_dicts() -> st.SearchStrategy[dict[str, Any]]:
    dim = st.integers(min_value=-2, max_value=6)
    item = st.fixed_dictionaries(
        {
            "intent": _maybe(st.just("do it"), anything),
            "embedding": _maybe(
                st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=6), json_values
            ),
            "skills": _maybe(st.just(["s1"]), json_values),
        }
    )
    return st.fixed_dictionaries(
        {
            "model": _maybe(st.just("m"), anything),
            "dimension": _maybe(dim, anything),
            "intents": _maybe(st.lists(item, max_size=3), json_values),
        }
    )


def encode(doc: Any) -> bytes:
    """JSON bytes, keeping lone surrogates as \\ud800 escapes (as a hostile registry would)."""
    return json.dumps(doc, ensure_ascii=True).encode()
