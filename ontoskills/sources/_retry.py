"""Retry policy for network sources: backoff with jitter, `Retry-After`, a total deadline.

`Retry-After` is parsed as RFC 9110 section 10.2.3 says: `delay-seconds` (ASCII digits only)
or an HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms, all GMT); anything
else is ignored (backoff applies), and every wait is capped by the policy and the deadline.
The `Deadline` is one budget per command for all its network waits (docs/CLI.md).
"""

from __future__ import annotations

import datetime
import http
import random
import re
import threading
import time
from dataclasses import dataclass

from .. import asciinum, envvars

ENV_RETRY_BASE = envvars.RETRY_BASE  # seconds; tests set it tiny
ENV_RETRY_MAX = envvars.RETRY_MAX  # cap on any single wait, Retry-After included
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})

_FOREVER = 10**12  # seconds: any longer delay-seconds is as absurd, and is capped anyway
# not calendar.month_abbr: that follows the process locale
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MON = r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"(?P<h>[0-9]{2}):(?P<m>[0-9]{2}):(?P<s>[0-9]{2})"
_HTTP_DATES = (
    # IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
    re.compile(rf"{_DAY}, (?P<d>[0-9]{{2}}) {_MON} (?P<y>[0-9]{{4}}) {_TIME} GMT"),
    # rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
    re.compile(rf"{_LONG_DAY}, (?P<d>[0-9]{{2}})-{_MON}-(?P<y>[0-9]{{2}}) {_TIME} GMT"),
    # asctime-date: Sun Nov  6 08:49:37 1994
    re.compile(rf"{_DAY} {_MON} (?P<d>[ 0-9][0-9]) {_TIME} (?P<y>[0-9]{{4}})"),
)


def _http_date(value: str) -> float | None:
    """Seconds since the epoch of an RFC 9110 HTTP-date, or None."""
    for pattern in _HTTP_DATES:
        m = pattern.fullmatch(value)
        if m is None:
            continue
        year = int(m["y"])
        if len(m["y"]) == 2:  # RFC 9110: a two-digit year more than 50 years ahead is past
            now_year = time.gmtime().tm_year
            year += now_year - now_year % 100
            if year > now_year + 50:
                year -= 100
        try:  # datetime refuses 31 Feb and 25:00; a leap second reads as :59
            when = datetime.datetime(
                year,
                _MONTHS[m["mon"]],
                int(m["d"]),
                int(m["h"]),
                int(m["m"]),
                min(int(m["s"]), 59),
                tzinfo=datetime.timezone.utc,
            )
        except ValueError:
            return None
        return when.timestamp()
    return None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header; None when absent or not RFC 9110."""
    if not value:
        return None
    value = value.strip(" \t")  # the field value's optional whitespace, nothing else
    seconds = asciinum.uint(value, limit=_FOREVER)  # ASCII digits: never '²' or '١'
    if seconds is not None:
        return float(min(seconds, _FOREVER))
    when = _http_date(value)
    if when is None:
        return None
    return max(0.0, when - (time.time() if now is None else now))


# Why we retry, in words (warnings and the final error) ----------------------------------
def status_text(status: int) -> str:
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


_TRANSPORT_TEXT = {
    "ConnectError": "connection failed",
    "ConnectTimeout": "connect timed out",
    "ReadTimeout": "no data before the read timeout",
    "WriteTimeout": "write timed out",
    "PoolTimeout": "no free connection",
    "RemoteProtocolError": "connection closed mid-response",
    "ReadError": "connection broken while reading",
}


def transport_text(exc: Exception) -> str:
    name = type(exc).__name__
    return f"{_TRANSPORT_TEXT[name]}, {name}" if name in _TRANSPORT_TEXT else name


class Deadline:
    """A command's total budget for network work, counted from its first request.

    Shared by every source and worker thread of one command: each attempt's timeouts and
    each backoff sleep are cut to what is left, and nothing starts once it is spent.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._start: float | None = None
        self._lock = threading.Lock()

    def remaining(self) -> float:
        with self._lock:
            if self._start is None:
                self._start = time.monotonic()
            return max(0.0, self.seconds - (time.monotonic() - self._start))

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0


@dataclass
class RetryPolicy:
    retries: int  # extra attempts after the first
    base: float = 0.5
    cap: float = 30.0

    @classmethod
    def from_env(cls, retries: int) -> RetryPolicy:
        """Backoff base and cap from the environment; a malformed value is a UsageError."""
        return cls(
            retries=max(0, retries),
            base=envvars.get(ENV_RETRY_BASE),
            cap=envvars.get(ENV_RETRY_MAX),
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Wait before attempt+1 (attempt counts from 0). Retry-After wins, within the cap."""
        if retry_after is not None:
            return min(retry_after, self.cap)
        backoff = self.base * (2 ** min(attempt, 32))
        # "equal jitter": never less than half the backoff, so a storm still spreads out
        return min(self.cap, backoff / 2 + random.uniform(0, backoff / 2))
