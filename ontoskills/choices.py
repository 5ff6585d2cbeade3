"""The base of every closed set of words a user types or a file holds (search modes, verify
modes, trust tiers, registry kinds).

A member is a `str`: it compares, hashes, formats and serialises (JSON, TOML) as its value,
so a lock, a JSON answer or an f-string never sees `SearchMode.BM25`. Typer takes these
classes as option types and lists their values as the choices (`--mode [auto|bm25|...]`),
so a wrong word is a usage error (exit 2) before any command code runs.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

C = TypeVar("C", bound="Choice")


class Choice(str, Enum):
    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(str(m.value) for m in cls)

    @classmethod
    def listed(cls) -> str:
        """`a, b, c`: what an error message offers."""
        return ", ".join(cls.values())

    @classmethod
    def get(cls: type[C], value: object) -> C | None:
        """The member spelled `value`, or None (never raises: callers word their errors)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for m in cls:
                if m.value == value:
                    return m
        return None
