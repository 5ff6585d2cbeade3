"""Counted nouns in what a person reads: "1 skill", "2 skills" (never "1 skills")."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, the noun in the plural (`many`, else noun + "s") unless count is 1."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"
