"""Typed reads of untrusted tables: a TOML table or a JSON object someone else wrote.

Model: packaging's `pylock.py` (`_get`, `_get_required`, `_get_sequence_of_objects`, a
`_from_dict` per class). A `Table` wraps one mapping with the file it came from, its key path
and the error class of its format (a lock's is exit 3, config.toml's exit 2, a registry's file
exit 4); every getter checks the type it promises (a bool is never an int) and its refusal
names the file and the key path. Each record class reads itself from a `Table` (`from_toml`)
next to where it writes itself (`to_toml`), so a new field is a few adjacent lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any, NoReturn, TypeVar, overload

from .errors import OntoskillsError

T = TypeVar("T")
E = TypeVar("E", bound=Enum)

_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    float: "a number",
    list: "an array",
    dict: "a table",
}


def _is(value: object, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _name(kind: type) -> str:
    return _NAMES.get(kind, kind.__name__)


class Table:
    """One untrusted mapping from `source` (a file), at key path `path` ("" for the top)."""

    def __init__(
        self,
        data: object,
        source: str,
        error: Callable[..., OntoskillsError],
        *,
        path: str = "",
        hint: str | None = None,
        null_is_absent: bool = False,
    ) -> None:
        """`null_is_absent`: a JSON `null` reads as a missing key (registries write them)."""
        self.source = source
        self.path = path
        self.error = error
        self.hint = hint
        self.null_is_absent = null_is_absent
        if not isinstance(data, dict):
            self.fail(f"must be {_name(dict)}")
        self.data: dict[str, Any] = data

    @property
    def where(self) -> str:
        """`<file>: <key path>` (or the file), for messages the caller words itself."""
        return f"{self.source}: {self.path}" if self.path else self.source

    def fail(self, message: str, key: str | None = None) -> NoReturn:
        """Raise the format's error: `<file>: <key path> <message>` (the key path of `key`
        in this table, or of the table itself)."""
        who = self._key(key) if key is not None else self.path
        raise self.error(
            f"{self.source}: {who} {message}" if who else f"{self.source}: {message}",
            hint=self.hint,
        )

    def _key(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def child(self, data: object, key: str) -> Table:
        """The table `data` found under `key` (a name or `key[i]`) of this one."""
        return Table(
            data,
            self.source,
            self.error,
            path=self._key(key),
            hint=self.hint,
            null_is_absent=self.null_is_absent,
        )

    def has(self, key: str) -> bool:
        return key in self.data and not (self.null_is_absent and self.data[key] is None)

    # ------------------------------------------------------------------ scalars
    @overload
    def get(self, key: str, kind: type[T]) -> T | None: ...
    @overload
    def get(self, key: str, kind: type[T], default: T) -> T: ...
    def get(self, key: str, kind: type[T], default: T | None = None) -> T | None:
        """The value of `key` if it is a `kind`; `default` when absent; refused otherwise."""
        if not self.has(key):
            return default
        value = self.data[key]
        if not _is(value, kind):
            self.fail(f"must be {_name(kind)}, got {value!r:.80}", key)
        return value

    def required(self, key: str, kind: type[T]) -> T:
        value = self.get(key, kind)
        if value is None:
            self.fail("is missing", key)
        return value

    def number(self, key: str, *, integer: bool, low: float, high: float) -> float | None:
        """A finite number in [low, high] (TOML's `inf` and `nan` refused), None if unset;
        an integer key refuses `2.5`. Worded "a number" either way."""
        if not self.has(key):
            return None
        value = self.data[key]
        if not (_is(value, int) if integer else _is(value, float)) or not (
            math.isfinite(value) and low <= value <= high
        ):
            self.fail(f"must be a number from {low:g} to {high:g}, got {value!r:.80}", key)
        return float(value)

    def choice(self, key: str, kind: type[E]) -> E | None:
        """A word of a closed set (a `choices.Choice`), or None when absent."""
        if not self.has(key):
            return None
        raw = self.data[key]
        found = next((m for m in kind if m.value == raw), None)
        if found is None:
            words = ", ".join(str(m.value) for m in kind)
            self.fail(f"must be one of {words}, got {str(raw)[:40]!r}", key)
        return found

    # ------------------------------------------------------------------ containers
    def list_of(self, key: str, kind: type[T], default: list[T] | None = None) -> list[T]:
        """An array whose every item is a `kind` (`default`, else [], when absent)."""
        items = self.get(key, list)
        if items is None:
            return list(default or [])
        for i, item in enumerate(items):
            if not _is(item, kind):
                self.fail(f"must be {_name(kind)}", f"{key}[{i}]")
        return list(items)

    def map_of(self, key: str, kind: type[T]) -> dict[str, T]:
        """A table whose every value is a `kind` ({} when absent)."""
        found = self.get(key, dict) or {}
        for k, v in found.items():
            if not _is(v, kind):
                self.fail(f"must be {_name(kind)}", f"{key}.{k}")
        return dict(found)

    def table(self, key: str) -> Table | None:
        """The table under `key`, or None when absent."""
        return self.child(self.data[key], key) if self.has(key) else None

    def tables(self, key: str) -> Iterator[tuple[str, Table]]:
        """(name, table) for each entry of a table of tables (`[packages."a/b"]`)."""
        found = self.get(key, dict) or {}
        for name, value in found.items():
            yield name, self.child(value, f"{key}.{name}")

    def tables_of(self, key: str) -> list[Table]:
        """The tables of an array of tables (`files = [{...}, ...]`), [] when absent."""
        items = self.get(key, list) or []
        return [self.child(item, f"{key}[{i}]") for i, item in enumerate(items)]
