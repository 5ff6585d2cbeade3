"""Numeric `ONTOSKILLS_*` environment variables, parsed strictly and in one place.

A typo in one (`ONTOSKILLS_LOCK_TIMEOUT=10s`, `=-1`, `=nan`, `=١٢`) is a usage error (exit 2)
that names the variable. The CLI entry calls `check_all()` before any command runs
(`--version` included), so no code path meets a bad value later as a traceback or a silent
fall back to the default. Domain code reads values through `get()`; module-level constants
that must exist at import (limits.py) use `get_lenient()`, which the entry has already
validated for CLI runs.

Only ASCII decimal notation is accepted: Python's own `float()` also takes `inf`, `nan`,
`1_0`, `1e9` and non-ASCII digits, each of which has bitten a timeout or a size limit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from . import asciinum
from .errors import UsageError


@dataclass(frozen=True)
class NumericVar:
    name: str
    default: float
    minimum: float
    maximum: float
    integer: bool
    unit: str


LOCK_TIMEOUT = "ONTOSKILLS_LOCK_TIMEOUT"
RETRY_BASE = "ONTOSKILLS_RETRY_BASE"
RETRY_MAX = "ONTOSKILLS_RETRY_MAX"
NETWORK_DEADLINE = "ONTOSKILLS_NETWORK_DEADLINE"
MAX_FILE_MB = "ONTOSKILLS_MAX_FILE_MB"
MAX_PACKAGE_MB = "ONTOSKILLS_MAX_PACKAGE_MB"
ENCODER_THREADS = "ONTOSKILLS_ENCODER_THREADS"

# Bounds are generous but finite: a week of waiting or a terabyte file is already absurd.
VARS: dict[str, NumericVar] = {
    v.name: v
    for v in (
        NumericVar(LOCK_TIMEOUT, 600, 0, 7 * 86400, False, "seconds"),
        NumericVar(RETRY_BASE, 0.5, 0, 3600, False, "seconds"),
        NumericVar(RETRY_MAX, 30, 0, 3600, False, "seconds"),
        NumericVar(NETWORK_DEADLINE, 90, 0.001, 86400, False, "seconds"),
        NumericVar(MAX_FILE_MB, 64, 1, 1 << 20, True, "MiB"),
        NumericVar(MAX_PACKAGE_MB, 512, 1, 1 << 20, True, "MiB"),
        NumericVar(ENCODER_THREADS, 1, 1, 256, True, "threads"),
    )
}


def parse(var: NumericVar, raw: str) -> float:
    """One value of `var`; UsageError naming it when it is not a number in range."""
    text = raw.strip()
    if var.integer:
        whole = asciinum.uint(text, limit=10**15)
        value = None if whole is None else float(whole)
    else:
        value = asciinum.decimal(text)
    if value is None or not var.minimum <= value <= var.maximum:
        kind = "a whole number" if var.integer else "a number"
        raise UsageError(
            f"{var.name} must be {kind} of {var.unit} from {var.minimum:g} to "
            f"{var.maximum:g}, got {raw[:40]!r}",
            hint=f"fix or unset {var.name} (default {var.default:g})",
        )
    return value


def get(name: str, environ: Mapping[str, str] | None = None) -> float:
    """The variable's value, or its default when unset or empty. Raises UsageError."""
    var = VARS[name]
    raw = (os.environ if environ is None else environ).get(name, "")
    return var.default if raw.strip() == "" else parse(var, raw)


def get_int(name: str, environ: Mapping[str, str] | None = None) -> int:
    return int(get(name, environ))


def get_lenient(name: str) -> float:
    """For import-time constants only: the default instead of an error (check_all reports it)."""
    try:
        return get(name)
    except UsageError:
        return VARS[name].default


def check_all(environ: Mapping[str, str] | None = None) -> None:
    """Validate every numeric variable that is set: the CLI calls this before any command."""
    for name in VARS:
        get(name, environ)


# Flags (CI, ONTOSKILLS_OFFLINE): one truthiness rule. Set to anything but these is on, as CI
# services set `CI` to `true`, `1` or their own name (`CI=woodpecker`).
_FALSE_WORDS = ("", "0", "false", "no", "off")


def flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether the flag variable `name` is on (see `_FALSE_WORDS` for off)."""
    value = (os.environ if env is None else env).get(name, "")
    return value.strip().lower() not in _FALSE_WORDS
