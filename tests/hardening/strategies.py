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


# ------------------------------------------------------------------ issue 13 inputs

# Numeric environment values: near misses of a number, non-ASCII digits, specials.
env_values = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "0",
            "1",
            "600",
            "0.5",
            ".5",
            "5.",
            "-1",
            "+1",
            "1e3",
            "1_0",
            "nan",
            "inf",
            "0x10",
            "١٢",
            "²",
            "10s",
            " 7 ",
            "9" * 40,
            "1.0000000001",
            "\x00",
            "\ud800",
        ]
    ),
    st.from_regex(r"[0-9]{1,20}(\.[0-9]{0,12})?", fullmatch=True),
    st.text(max_size=12),
)

_HTTP_DATE = st.builds(
    lambda day, d, mon, y, h, m, s, zone: (
        f"{day}, {d:02d} {mon} {y:04d} {h:02d}:{m:02d}:{s:02d} {zone}"
    ),
    st.sampled_from(["Mon", "Sun", "Xyz"]),
    st.integers(0, 40),
    st.sampled_from(["Jan", "Feb", "Nov", "Foo"]),
    st.integers(0, 9999),
    st.integers(0, 30),
    st.integers(0, 70),
    st.integers(0, 70),
    st.sampled_from(["GMT", "UTC", "PST", ""]),
)
retry_after_values = st.one_of(
    st.from_regex(r"[0-9]{1,30}", fullmatch=True), _HTTP_DATE, st.text(max_size=40)
)

# Text mixing letters, emoji and every kind of hidden character, legitimate or not.
_HIDDEN_SAMPLES = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u2028", "\u2029",
    "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\ufe0e", "\ufe0f", "\ufe01",
    "\U000e0100", "\U000e0041", "\U000e0067", "\U000e007f", "\u202e", "\u2066", "\u061c",
    "\U0001bca0", "\U0001d173", "\ufff9",
]  # fmt: skip
_VISIBLE_SAMPLES = ["a", " ", "😀", "👨", "🏴", "❤", "1", "\u20e3", "葛", "م", "ی", "क", "🏽", "ᠠ"]
hidden_texts = st.lists(
    st.one_of(
        st.sampled_from(_HIDDEN_SAMPLES), st.sampled_from(_VISIBLE_SAMPLES), st.text(max_size=3)
    ),
    max_size=20,
).map("".join)

relpaths = st.from_regex(r"[A-Za-z0-9._-]{1,6}(/[A-Za-z0-9._-]{1,6}){0,3}", fullmatch=True).filter(
    lambda p: all(seg not in (".", "..") for seg in p.split("/"))
)


def _rpc_line(msg: Any) -> str:
    return json.dumps(msg, ensure_ascii=True) + "\n"


jsonrpc_lines = st.one_of(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.one_of(st.just("tools/call"), st.text(max_size=5)),
        },
        optional={
            "id": st.one_of(st.integers(), st.text(max_size=4), st.booleans(), st.none()),
            "params": json_values,
        },
    ).map(_rpc_line),
    st.text(max_size=60),
)
