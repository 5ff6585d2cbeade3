"""Strict JSON for untrusted registry files.

json.loads silently keeps the last of duplicate keys, accepts NaN and recurses until the
interpreter's stack limit. A registry file that relies on any of that is refused with a
FormatError (exit 4) that names the file.
"""

from __future__ import annotations

import json
import math
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


def _too_deep(value: Any, limit: int) -> bool:
    """Is the parsed value nested deeper than limit? Iterative, O(containers)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


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


def dumps_canonical(value: Any) -> str:
    """Stable, human-diffable JSON: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def is_finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
