"""The one reader of TOML we did not write: the lockfile, config.toml, a client's config.toml
(Codex), each bounded before it is parsed and every failure mapped to the caller's error.

tomllib recurses once per nested array or inline table and raises RecursionError (a bug's
"internal error", exit 1) on a few hundred levels; dotted keys (`a.a.a... = 1`) it builds
without recursing, and then whoever walks the result (tomli_w writing config.toml back, json
of the lock cache) recurses instead. So: the size is checked first, then a scan of the
brackets outside strings and comments bounds the nesting before the parser starts (skipped
when there are too few brackets to matter, the usual config), then the parsed value is
walked once, iteratively, for its depth (dotted keys and tables included) and, when the
caller asks, the length of every string (a lock URL of 64 KB cost `lock export` 35 s).
Whatever still escapes the parser (RecursionError, MemoryError, ValueError) is the same
error: `error` is the caller's class, so its exit code is the caller's (docs/CLI.md: 3 lock,
2 config, 4 a client file).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any

import tomlkit
import tomlkit.exceptions

from .errors import OntoskillsError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Deeper than any file we read needs (the lock: 4 levels, Codex: ~5), far below the ~450
# levels where tomllib runs out of stack and tomlkit's own limit of 100.
MAX_DEPTH = 64

# What can hide a bracket from the scan: strings (multi-line first) and comments. Loops are
# unrolled (`a*(?:b a*)*`: an alternation per character took twice as long on a lock), and
# every string also ends at its line's or the text's end, so an unterminated one is still a
# match: a failed match would be retried from each quote inside it (quadratic in a line).
_TOKENS = re.compile(
    r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:"""|\\?\Z)'
    r"|'''[\s\S]*?(?:'''|\Z)"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*\\?(?:"|(?=\n)|\Z)'
    r"|'[^'\n]*(?:'|(?=\n)|\Z)"
    r"|#[^\n]*"
    r"|[\[\]{}]"
)


class _Refused(Exception):
    pass


def _check_brackets(text: str, max_depth: int) -> None:
    """Refuse brackets nested deeper than max_depth, before any parser recurses on them."""
    if text.count("[") + text.count("{") <= max_depth:
        return  # too few brackets to nest that deep: nothing to scan
    depth = 0
    for m in _TOKENS.finditer(text):
        ch = text[m.start()]
        if ch in "[{":
            depth += 1
            if depth > max_depth:
                raise _Refused(f"nested deeper than {max_depth} levels")
        elif ch in "]}":
            depth = max(depth - 1, 0)


def _check_tree(value: Any, max_depth: int, max_string: int | None) -> None:
    """Depth and string lengths of a parsed document, iteratively (keys count as strings)."""
    stack: list[tuple[Any, int]] = [(value, 0)]  # the document itself: no bracket
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
            if max_string is not None:
                _check_strings(node.keys(), max_string)
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            raise _Refused(f"nested deeper than {max_depth} levels")
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
            elif max_string is not None and isinstance(child, str) and len(child) > max_string:
                raise _Refused(f"a string of {len(child)} characters (at most {max_string})")


def _check_strings(keys: Any, max_string: int) -> None:
    for key in keys:
        if len(key) > max_string:
            raise _Refused(f"a key of {len(key)} characters (at most {max_string})")


def _text(data: bytes | str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        unit = "characters" if isinstance(data, str) else "bytes"
        raise _Refused(f"{len(data)} {unit}, over the limit of {max_bytes}")
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Refused(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


@contextlib.contextmanager
def _refusals(source: str, error: type[OntoskillsError], hint: str | None) -> Iterator[None]:
    """Every way reading TOML fails, as the caller's `error` naming `source`: the bounds,
    either parser's syntax error (tomlkit's ParseError is a ValueError), and whatever still
    escapes a parser (RecursionError, MemoryError)."""
    try:
        yield
    except _Refused as exc:
        raise error(f"{source}: {exc}", hint=hint) from None
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError, ValueError) as exc:
        raise error(f"{source}: invalid TOML ({exc})", hint=hint) from None
    except RecursionError:
        raise error(f"{source}: TOML nested too deeply to read", hint=hint) from None
    except MemoryError:
        raise error(f"{source}: too large to read", hint=hint) from None


def loads(
    data: bytes | str,
    *,
    source: str,
    error: type[OntoskillsError],
    max_bytes: int,
    hint: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_string: int | None = None,
) -> dict[str, Any]:
    """The parsed document (tomllib), or `error("{source}: invalid TOML (...)", hint)`."""
    with _refusals(source, error, hint):
        text = _text(data, max_bytes)
        _check_brackets(text, max_depth)
        value = tomllib.loads(text)
        _check_tree(value, max_depth, max_string)
        return value


def parse_document(
    data: bytes | None,
    *,
    source: str,
    error: type[OntoskillsError],
    max_bytes: int,
    hint: str | None = None,
    max_depth: int = MAX_DEPTH,
) -> tomlkit.TOMLDocument:
    """A tomlkit document we will edit and write back (comments and layout kept), read
    under the same bounds as `loads`; an empty one for None."""
    if data is None:
        return tomlkit.document()
    with _refusals(source, error, hint):
        text = _text(data, max_bytes)
        _check_brackets(text, max_depth)
        doc = tomlkit.parse(text)
        _check_tree(doc, max_depth, None)
        return doc
