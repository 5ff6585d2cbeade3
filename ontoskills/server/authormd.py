"""An authors' own SKILL.md (kept in packages made with `pack --from-skill-md`): its
frontmatter, as the Skills extension's entry must carry it (identical to the file's).

Used only when the file can be this skill's SKILL.md as is: YAML frontmatter that is a
mapping, `name` equal to the name we serve the skill under, a non-empty `description`, and
values JSON can carry (dates become ISO strings, as a YAML 1.2 reader gives them). Anything
else returns None and the caller generates SKILL.md instead. Bounded by the one YAML reader
(yamlio.py): at most 64 KB of frontmatter and 10,000 values, aliases counted as what they
expand to (YAML's "billion laughs": no reply carries more than 64 KB of its scalars).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from .. import limits, yamlio
from ..errors import FormatError

_FRONTMATTER = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
MAX_FRONTMATTER = limits.MAX_FRONTMATTER_BYTES
MAX_VALUES = 10_000


class _TooBig(Exception):
    pass


def _plain(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(value, dict):
        return {str(k): _plain(v, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_plain(v, budget) for v in items]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if (isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
        raise _TooBig  # NaN and infinities have no JSON form
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        raise _TooBig
    return str(value)


def frontmatter_of(data: bytes, name: str) -> dict[str, Any] | None:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    m = _FRONTMATTER.match(text)
    if m is None:
        return None
    try:  # bounded: size, depth, and aliases counted as what they expand to
        raw = yamlio.loads(
            m.group(1),
            source="SKILL.md",
            error=FormatError,
            max_bytes=MAX_FRONTMATTER,
            max_nodes=MAX_VALUES,
        )
        front = _plain(raw, [MAX_VALUES])
    except (FormatError, _TooBig, RecursionError, ValueError, TypeError):
        return None
    if not isinstance(front, dict) or front.get("name") != name:
        return None
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        return None
    return front
