"""`mcp-config`: register `ontoskills serve` in an MCP client's config file (the clients and
their formats: clients.py), as a command to start (stdio) or a URL (`--url`: a running
`serve --transport http`).

Every client keeps a map of server name -> launch spec; only the file, its format (JSON, TOML,
YAML), the map's key and the entry's shape differ. We merge into what is there (other servers
and settings untouched), back the old file up as `<file>.bak`, never write duplicates (same
name = replace, identical entry = no write at all; switching between a command and a URL drops
our keys of the other form, the user's own keys stay), and refuse to touch a file we cannot
parse: clobbering a user's config to add one entry would be worse than asking them to fix it.

The file is the user's: a symlink to it (dotfiles) stays a link and its target is replaced
atomically with the target's permissions; we only write standard JSON/TOML/YAML, and
before writing we parse what we are about to write with a strict parser and check it says
exactly the old document plus our entry. A config holding a value we cannot write back as it
was (a number like 1e400 that only parses as infinity) is refused, file untouched.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit

from .. import limits
from ..errors import FormatError
from ..fsutil import atomic_write_bytes, atomic_write_through
from . import yamlconfig
from .clients import CLIENTS as CLIENT_TABLE
from .clients import managed_keys
from .merge import (
    MAX_CONFIG_BYTES,
    check_round_trip,
    malformed,
    merge_json,
    merge_toml,
    toml_super_table,
    toml_table,
)
from .spec import Spec, Target, client_entry


@dataclass(frozen=True)
class ApplyResult:
    target: Target
    entry: dict[str, Any]
    action: Literal["added", "updated", "unchanged"]
    backup: Path | None


def snippet(target: Target, spec: Spec) -> str:
    """What `--print` shows: a minimal file that holds just our entry."""
    entry = client_entry(target.client, spec)
    if target.is_toml:
        doc = tomlkit.document()
        doc[target.key] = toml_super_table({spec.name: toml_table(entry)})
        return tomlkit.dumps(doc)
    if target.is_yaml:
        return yamlconfig.dumps({target.key: {spec.name: entry}})
    return json.dumps({target.key: {spec.name: entry}}, indent=2, ensure_ascii=False) + "\n"


def apply(target: Target, spec: Spec) -> ApplyResult:
    """Merge our entry into the target file, atomically, with a `.bak` of the old file."""
    entry = client_entry(target.client, spec)
    old = _read_config(target)
    managed = managed_keys(CLIENT_TABLE[target.client])
    if target.is_toml:
        new, action = merge_toml(target, old, spec.name, entry, managed)
    elif target.is_yaml:
        new, action = yamlconfig.merge(target, old, spec.name, entry, managed)
    else:
        new, action = merge_json(target, old, spec.name, entry, managed)
    if action == "unchanged":
        return ApplyResult(target, entry, action, None)
    check_round_trip(target, old, new, spec.name, entry, managed)
    backup = None
    if old is not None:
        # ~/.claude.json may hold secrets: the backup keeps the file's 0600
        mode = stat.S_IMODE(os.stat(target.path).st_mode)
        backup = target.path.with_name(target.path.name + ".bak")
        atomic_write_bytes(backup, old, mode)  # a link at .bak is replaced, never followed
    atomic_write_through(target.path, new)
    return ApplyResult(target, entry, action, backup)


def _read_config(target: Target) -> bytes | None:
    """The current file (through a symlink), None when absent; only a regular file, bounded,
    opened without blocking (a FIFO or /dev/zero must not hang `mcp-config`)."""
    try:
        return limits.read_regular_file(
            target.path, MAX_CONFIG_BYTES, what="client config", error=FormatError
        )
    except FileNotFoundError:
        return None
    except FormatError as exc:  # say it the way every other refusal of this file says it
        raise malformed(target, exc.message.removeprefix(f"{target.path}: ")) from None
