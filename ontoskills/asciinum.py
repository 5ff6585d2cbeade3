"""Numbers that arrive as text (a flag, a header, a file field, a query part): ASCII digits only.

Python is generous with digits: `int("١٦")` is 16 and `int("𝟏")` is 1 (any Unicode decimal
digit), `int(" 1_6 ")` is 16 too, `str.isdigit()` also says yes to `²` and `①` (which `int()`
then refuses with a ValueError), a regex `\\d` matches every script's digits, and `int()` of
more than 4,300 digits raises. So `--threshold root=١٦` was accepted as 16, `root=²` was an
internal error, and `١.٠.١` was published as if it were 1.0.1.

Every number read from text goes through here: ASCII `0-9` only, no sign, no space, no `_`,
and a bounded number of digits. Callers turn None into their own error (exit 2 for a flag or
a setting, 4 for registry data, 3 for the lock). Regexes elsewhere spell digits `[0-9]`
(tests/hardening/test_r3_encoding.py greps the package for `\\d`, `isdigit(` and friends).
"""

from __future__ import annotations

import re

DIGITS = "0123456789"
_UINT = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"([0-9]*)(?:\.([0-9]*))?")
MAX_UINT = 10**18  # far above any count, size or duration we read; int() stays cheap


def is_uint(text: str) -> bool:
    """True when text is one or more ASCII digits and nothing else."""
    return _UINT.fullmatch(text) is not None


def uint(text: str, limit: int = MAX_UINT) -> int | None:
    """text as a whole number >= 0 written in ASCII digits only, else None.

    A value above `limit` reads as `limit + 1`, so the caller's range check refuses it (or
    a "too big" comparison holds) without `int()` ever seeing thousands of digits."""
    if not is_uint(text):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(limit)):
        return limit + 1
    return min(int(digits), limit + 1)


def decimal(text: str, int_digits: int = 15, frac_digits: int = 9) -> float | None:
    """`12`, `0.5`, `.5` or `3.` in ASCII digits, else None: no sign, exponent, `inf`,
    `nan` or `_`, which `float()` would all take."""
    m = _DECIMAL.fullmatch(text)
    if m is None:
        return None
    whole, frac = m.group(1), m.group(2) or ""
    if not (whole or frac) or len(whole) > int_digits or len(frac) > frac_digits:
        return None
    return float(f"{whole or '0'}.{frac or '0'}")


def json_uint(value: object) -> int | None:
    """A count read back from JSON (ours, under a home or cache anyone could edit): a JSON
    integer >= 0, else None. A string is not a count, whatever digits it holds."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
