"""Retry policy for network sources: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import email.utils
import os
import random
import time
from dataclasses import dataclass

ENV_RETRY_BASE = "ONTOSKILLS_RETRY_BASE"  # seconds; tests set it tiny
ENV_RETRY_MAX = "ONTOSKILLS_RETRY_MAX"  # cap on any single wait, Retry-After included
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value >= 0 else default


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class RetryPolicy:
    retries: int  # extra attempts after the first
    base: float = 0.5
    cap: float = 30.0

    @classmethod
    def from_env(cls, retries: int) -> RetryPolicy:
        return cls(
            retries=max(0, retries),
            base=_env_float(ENV_RETRY_BASE, 0.5),
            cap=_env_float(ENV_RETRY_MAX, 30.0),
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Wait before attempt+1 (attempt counts from 0). Retry-After wins, within the cap."""
        if retry_after is not None:
            return min(retry_after, self.cap)
        backoff = self.base * (2**attempt)
        # "equal jitter": never less than half the backoff, so a storm still spreads out
        return min(self.cap, backoff / 2 + random.uniform(0, backoff / 2))
