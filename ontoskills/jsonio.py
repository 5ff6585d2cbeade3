"""Strict JSON for untrusted registry files.

json.loads silently keeps the last of duplicate keys, accepts NaN and recurses until the
interpreter's stack limit. A registry file that relies on any of that is refused with a
FormatError (exit 4) that names the file.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .errors import FormatError, LimitExceededError

MAX_DEPTH = 64


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard constant {name}")


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET_RE = re.compile(r"[\[\]{}]")


def _depth(data: bytes | str) -> int:
    """Maximum bracket nesting outside strings, computed without recursion.

    Strings are cut out by one regex and only brackets are visited: a per-character Python
    loop cost ~4 ms per 384-float intents.json (most of an embeddings install).
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    depth = best = 0
    for m in _BRACKET_RE.finditer(_STRING_RE.sub("", text)):
        if m.group() in "[{":
            depth += 1
            best = max(best, depth)
        else:
            depth -= 1
    return best


def loads(data: bytes | str, *, source: str, max_bytes: int | None = None) -> Any:
    """Parse JSON strictly; `source` names the file in error messages."""
    if max_bytes is not None and len(data) > max_bytes:
        raise LimitExceededError(f"{source}: {len(data)} bytes exceeds the {max_bytes} limit")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
    else:
        text = data
    if _depth(text) > MAX_DEPTH:
        raise FormatError(f"{source}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{source}: invalid JSON ({exc})") from None
    return value


def dumps_canonical(value: Any) -> str:
    """Stable, human-diffable JSON: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def is_finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
