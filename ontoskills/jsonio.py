"""Strict JSON for untrusted registry files.

json.loads silently keeps the last of duplicate keys, accepts NaN and recurses until the
interpreter's stack limit. A registry file that relies on any of that is refused with a
FormatError (exit 4) that names the file.

Memory is bounded before parsing, on the decoded bytes (callers pass what came out of any
Content-Encoding): by `max_bytes`, and by `max_items`, the number of values, keys and
containers the parser may build. Bytes alone do not bound memory: 3 bytes of `{},` become a
64-byte dict, so 16 MB of `[{},{},...]` would cost ~360 MB.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from . import limits
from .errors import FormatError, LimitExceededError

MAX_DEPTH = 64
# A JSON string, escapes included ("unrolled loop": linear, no backtracking).
_STRING_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_STRING_S = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _items_upper_bound(data: bytes | str) -> int:
    """At least the number of values + keys json.loads would create, from structural
    characters. Values other than the root: an array's first element (after '[') and the
    rest (after ','), an object member (after ':', with its key). Object commas separate
    members (at most ':' - '{' of them), so values + keys <= 1 + ',' + ':' + '[' + '{'."""
    if isinstance(data, bytes):
        return 1 + data.count(b",") + data.count(b":") + data.count(b"[") + data.count(b"{")
    return 1 + data.count(",") + data.count(":") + data.count("[") + data.count("{")


def _check_items(data: bytes | str, max_items: int, source: str) -> None:
    bound = _items_upper_bound(data)
    if bound <= max_items:
        return  # the usual case: one C-speed count per character class
    # Marks inside strings inflate the bound: take them back out, string by string (a
    # re.sub would build one piece per string: gigabytes for 256 MB of `"a",`). Every
    # string is a value or a key, so more strings than the budget is over it: refused at
    # once when even a lower bound on the strings says so, else the loop runs at most
    # max_items times.
    if isinstance(data, bytes):
        pattern: Any = _STRING_B
        strings = (data.count(b'"') - data.count(b'\\"')) // 2
        marks: Any = b",:[{"
    else:
        pattern, marks = _STRING_S, str.maketrans("", "", ",:[{")
        strings = (data.count('"') - data.count('\\"')) // 2
    if strings <= max_items:
        for n, m in enumerate(pattern.finditer(data), 1):
            if n > max_items:
                break
            text = m.group()
            bound -= len(text) - len(
                text.translate(None, marks) if isinstance(text, bytes) else text.translate(marks)
            )
            if bound <= max_items:
                return
    raise LimitExceededError(
        f"{source}: more than {max_items} JSON values (a document this large would exhaust memory)",
        hint="the registry file is too large or hostile; nothing was installed",
    )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard constant {name}")


def _children(node: Any) -> Any:
    return iter(node.values() if isinstance(node, dict) else node)


def _too_deep(value: Any, limit: int) -> bool:
    """Is the parsed value nested deeper than limit? Depth-first over iterators: O(values)
    time and O(depth) memory (a stack of every child doubled the peak of a wide document)."""
    stack = [_children(value)]  # stack[i] iterates the children of a container at depth i+1
    while stack:
        for child in stack[-1]:
            if isinstance(child, (dict, list)):
                if len(stack) + 1 > limit:
                    return True
                stack.append(_children(child))
                break
        else:
            stack.pop()
    return False


def loads(
    data: bytes | str,
    *,
    source: str,
    max_bytes: int | None = None,
    max_items: int = limits.MAX_JSON_ITEMS,
) -> Any:
    """Parse JSON strictly; `source` names the file in error messages."""
    if max_bytes is not None and len(data) > max_bytes:
        raise LimitExceededError(f"{source}: {len(data)} bytes exceeds the {max_bytes} limit")
    _check_items(data, max_items, source)
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
    else:
        text = data
    # The depth is checked on the parsed value: a character scan in Python cost ~2 s on a
    # 20 MB index (benchmarks/growth.py). json's C parser raises RecursionError itself on
    # nesting deep enough to hurt, so nothing unbounded happens before the check.
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except RecursionError:
        raise FormatError(f"{source}: JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise FormatError(f"{source}: invalid JSON ({exc})") from None
    if isinstance(value, (dict, list)) and _too_deep(value, MAX_DEPTH):
        raise FormatError(f"{source}: JSON nested deeper than {MAX_DEPTH} levels")
    return value


def loads_derived(data: bytes | str) -> Any:
    """JSON this tool wrote (caches under `state/derived/` or the cache folder, the lock
    owner file) read back from a folder anyone may have edited: plain json.loads (these are
    hot paths), but every failure is a ValueError, the one exception each such reader turns
    into "absent, rebuild": a planted 4 KB of `[` raised RecursionError past all of them."""
    try:
        return json.loads(data)
    except (RecursionError, MemoryError) as exc:
        raise ValueError(f"unreadable JSON ({type(exc).__name__})") from None


def dumps_canonical(value: Any) -> str:
    """Stable, human-diffable JSON: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def is_finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
