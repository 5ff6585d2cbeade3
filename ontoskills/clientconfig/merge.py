"""Our entry merged into a client's JSON or TOML config, and the strict read-back of the
result (YAML: yamlconfig.py). The rules every format shares live here too: what counts as
"already there" (`covers`), which of our keys from the other transport go (`merged_entry`),
and the one refusal of a file we cannot change safely (`malformed`, exit 4).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import tomlkit

from .. import jsonio, tomlio
from ..errors import FormatError
from .clients import CLIENTS as CLIENT_TABLE
from .clients import OURS
from .spec import Target

# ~/.claude.json keeps per-project history and grows to megabytes; far above that is not a
# config (or is /dev/zero behind a symlink).
MAX_CONFIG_BYTES = 64 * 1024 * 1024


def _canonical(value: Any) -> str:
    """A comparable form of a parsed document (NaN equals NaN, datetimes as text)."""
    return json.dumps(value, sort_keys=True, default=str, allow_nan=True)


def check_round_trip(
    target: Target,
    old: bytes | None,
    new: bytes,
    name: str,
    entry: dict[str, Any],
    managed: dict[str, Any] | None = None,
) -> None:
    """What we write, read back by a strict parser, is the old document plus our entry.
    (YAML checks itself in yamlconfig.merge.)"""
    if target.is_yaml:
        return
    try:
        if target.is_toml:
            before: Any = _toml(old, target) if old else {}
            after: Any = _toml(new, target)
        else:
            fresh = dict(CLIENT_TABLE[target.client].new_file)  # what a new file starts with
            before = jsonio.loads(old, source=str(target.path)) if old and old.strip() else fresh
            after = jsonio.loads(new, source=str(target.path))
    except FormatError as exc:
        why = exc.message.removeprefix(f"{target.path}: ")
        raise malformed(
            target, f"cannot be written back as standard {_kind(target)} ({why})"
        ) from None
    servers = before.setdefault(target.key, {})
    servers[name] = merged_entry(servers.get(name), entry, managed)
    if _canonical(after) != _canonical(before):
        raise malformed(target, f"would not read back as it was plus our entry as {_kind(target)}")


def _toml(data: bytes, target: Target) -> dict[str, Any]:
    return tomlio.loads(
        data, source=str(target.path), error=FormatError, max_bytes=MAX_CONFIG_BYTES
    )


def _kind(target: Target) -> str:
    return "TOML" if target.is_toml else "YAML" if target.is_yaml else "JSON"


def malformed(target: Target, why: str) -> FormatError:
    return FormatError(
        f"{target.path}: {why}; not changing it",
        hint=f"fix the file, or add the entry by hand from `ontoskills mcp-config --client "
        f"{target.client} --print`",
    )


def merge_json(
    target: Target,
    old: bytes | None,
    name: str,
    entry: dict[str, Any],
    managed: dict[str, Any] | None = None,
) -> tuple[bytes, Literal["added", "updated", "unchanged"]]:
    doc: Any = dict(CLIENT_TABLE[target.client].new_file)  # a file we create (opencode: $schema)
    if old is not None and old.strip():
        try:
            doc = jsonio.loads(old, source=str(target.path))
        except FormatError as exc:
            raise malformed(target, exc.message.split(": ", 1)[-1]) from None
    if not isinstance(doc, dict):
        raise malformed(target, "the top level is not a JSON object")
    servers = doc.setdefault(target.key, {})
    if not isinstance(servers, dict):
        raise malformed(target, f'"{target.key}" is not a JSON object')
    current = servers.get(name)
    if covers(current, entry, managed):
        return b"", "unchanged"
    action: Literal["added", "updated"] = "updated" if current is not None else "added"
    servers[name] = merged_entry(current, entry, managed)
    bad = _non_finite(doc)
    if bad is not None:
        raise malformed(target, f"{bad} is out of range for a JSON number; it cannot be kept")
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        return text.encode("utf-8"), action
    except UnicodeEncodeError:  # a "\\ud800" escape in the file: keep it an escape
        return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("ascii"), action


def _non_finite(value: Any, where: str = "$") -> str | None:
    """JSON path of a number Python read as inf (1e400): json.dumps would write Infinity."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))
    return None


def _stale(current: dict[str, Any], entry: dict[str, Any], managed: Any) -> set[str]:
    """Our keys of the other transport (a `url` left by an http entry we now replace); a key
    a user may set too (env, ...) only while it still holds what we wrote."""
    managed = managed or {}
    return {
        k
        for k in current
        if k in managed and k not in entry and (managed[k] is OURS or managed[k] == current[k])
    }


def merged_entry(current: Any, entry: dict[str, Any], managed: Any = None) -> Any:
    """Ours over the existing entry: the user's own keys (env, disabled, ...) stay."""
    if not isinstance(current, dict):
        return entry
    kept = {k: v for k, v in current.items() if k not in _stale(current, entry, managed)}
    return {**kept, **entry}


def covers(current: Any, entry: dict[str, Any], managed: Any = None) -> bool:
    """True when the existing entry already says everything ours says, and nothing of ours
    from another transport."""
    return (
        isinstance(current, dict)
        and all(current.get(k) == v for k, v in entry.items())
        and not _stale(current, entry, managed)
    )


def toml_table(values: dict[str, Any], inline: bool = False) -> Any:
    table = tomlkit.inline_table() if inline else tomlkit.table()
    for key, value in values.items():
        table[key] = value
    return table


def toml_super_table(children: dict[str, Any]) -> Any:
    table = tomlkit.table(is_super_table=True)
    for key, value in children.items():
        table[key] = value
    return table


def merge_toml(
    target: Target,
    old: bytes | None,
    name: str,
    entry: dict[str, Any],
    managed: dict[str, Any] | None = None,
) -> tuple[bytes, Literal["added", "updated", "unchanged"]]:
    try:  # bounded: a hostile nesting is exit 4 like any invalid file
        doc = tomlio.parse_document(
            old, source=str(target.path), error=FormatError, max_bytes=MAX_CONFIG_BYTES
        )
    except FormatError as exc:
        raise malformed(target, exc.message.removeprefix(f"{target.path}: ")) from None
    servers = doc.get(target.key)
    if servers is None:
        doc[target.key] = toml_super_table({name: toml_table(entry)})
        return tomlkit.dumps(doc).encode("utf-8"), "added"
    if not isinstance(servers, dict):
        raise malformed(target, f"[{target.key}] is not a table")
    current = servers.get(name)
    plain = current.unwrap() if current is not None and hasattr(current, "unwrap") else current
    if covers(plain, entry, managed):
        return b"", "unchanged"
    action: Literal["added", "updated"] = "updated" if current is not None else "added"
    try:  # tomlkit refuses some edits (a table inside an inline one): exit 4, file untouched
        if isinstance(current, dict):
            # Keep the user's other keys on our table (env, startup_timeout_sec, ...).
            for key in _stale(dict(current), entry, managed):
                del current[key]
            for key, value in entry.items():
                current[key] = value
        else:  # `mcp_servers = { ... }` holds only inline tables
            servers[name] = toml_table(entry, isinstance(servers, tomlkit.items.InlineTable))
        return tomlkit.dumps(doc).encode("utf-8"), action
    except (ValueError, TypeError) as exc:
        raise malformed(target, f"cannot merge our entry into it as written ({exc})") from None
