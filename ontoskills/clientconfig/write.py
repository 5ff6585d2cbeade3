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
import math
import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import tomlkit

from .. import jsonio, limits, tomlio
from ..errors import FormatError, UsageError
from ..fsutil import atomic_write_bytes, atomic_write_through
from ..paths import LOCKFILE_NAME
from . import yamlconfig
from .clients import CLIENTS as CLIENT_TABLE
from .clients import OURS, Scope, managed_keys, refuse_expansion

# ~/.claude.json keeps per-project history and grows to megabytes; far above that is not a
# config (or is /dev/zero behind a symlink).
MAX_CONFIG_BYTES = 64 * 1024 * 1024

_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
CLIENTS: tuple[str, ...] = tuple(CLIENT_TABLE)


@dataclass(frozen=True)
class Target:
    """Where one client keeps its MCP servers for one scope."""

    client: str
    scope: Scope
    path: Path
    key: str  # the map of servers: "mcpServers", "servers" (VS Code), "mcp_servers" (Codex)

    @property
    def is_toml(self) -> bool:
        return self.path.suffix == ".toml"

    @property
    def is_yaml(self) -> bool:
        return self.path.suffix in (".yaml", ".yml")


@dataclass(frozen=True)
class LaunchSpec:
    name: str
    command: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class RemoteSpec:
    """A running `serve --transport http`: its URL, and the variable holding the token."""

    name: str
    url: str
    token_env: str | None = None


Spec = LaunchSpec | RemoteSpec


@dataclass(frozen=True)
class ApplyResult:
    target: Target
    entry: dict[str, Any]
    action: Literal["added", "updated", "unchanged"]
    backup: Path | None


def resolve_target(
    client: str, scope: Scope | None, *, project_dir: Path, user_home: Path
) -> Target:
    """The config file for `client` at `scope` (default: the client's usual one)."""
    known = CLIENT_TABLE.get(client)
    if known is None:
        raise UsageError(f"unknown client {client!r}", hint=f"use one of: {', '.join(CLIENTS)}")
    scope = scope or known.default
    if scope == "project" and known.project is not None:
        path = project_dir / known.project
    elif scope == "global" and known.user is not None:
        path = known.user(user_home)
    else:
        other = "--global" if scope == "project" else "--project"
        raise UsageError(f"{client} has no {scope} MCP config file", hint=f"use {other}")
    return Target(client=client, scope=scope, path=path.absolute(), key=known.key)


def ontoskills_command() -> list[str]:
    """An absolute command line that starts this very ontoskills installation."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name.startswith("ontoskills") and argv0.is_file():
        return [str(argv0.absolute())]
    # The console script installed next to this interpreter runs the same environment.
    for name in ("ontoskills", "ontoskills.exe"):
        sibling = Path(sys.executable).parent / name
        if sibling.is_file():
            return [str(sibling.absolute())]
    found = shutil.which("ontoskills")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "ontoskills"]


def launch_spec(
    name: str,
    *,
    home: Path | None,
    lockfile: Path | None,
    command: list[str] | None = None,
    project: Path | None = None,
) -> LaunchSpec:
    """`ontoskills [--home H] [--lockfile L] serve`; H/L only when not the defaults.
    `project`: `ontoskills --project ROOT serve`, the project whatever folder the client
    starts the server in (issue 24).

    The client starts the server with its own environment, so a home chosen through
    ONTOSKILLS_HOME here must be written out explicitly.
    """
    if not _NAME_RE.fullmatch(name):
        raise UsageError(f"invalid server name {name!r}", hint="use letters, digits, - or _")
    cmd = command or ontoskills_command()
    args: list[str] = cmd[1:]
    default_home = (Path.home() / ".ontoskills").absolute()
    if project is not None:
        args += ["--project", str(project.absolute())]
        home = lockfile = None
    if home is not None and home.absolute() != default_home:
        args += ["--home", str(home.absolute())]
    effective_home = home.absolute() if home is not None else default_home
    if lockfile is not None and lockfile.absolute() != effective_home / LOCKFILE_NAME:
        args += ["--lockfile", str(lockfile.absolute())]
    args.append("serve")
    for part in (cmd[0], *args):
        try:
            part.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in a path: no config file can hold it
            raise UsageError(
                f"{part!r} is not valid UTF-8, so no client config can name it",
                hint="use a --home/--lockfile path whose name is valid UTF-8",
            ) from None
    return LaunchSpec(name=name, command=cmd[0], args=tuple(args))


def remote_spec(name: str, url: str, token_env: str | None) -> RemoteSpec:
    """`--url`: an http(s) URL of a running `serve --transport http`."""
    if not _NAME_RE.fullmatch(name):
        raise UsageError(f"invalid server name {name!r}", hint="use letters, digits, - or _")
    parsed = urlsplit(url)
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or any(c.isspace() for c in url)
    ):
        raise UsageError(
            f"{url!r} is not an http(s) URL", hint="e.g. --url http://127.0.0.1:8765/mcp"
        )
    if parsed.username or parsed.password:
        raise UsageError(
            "the URL carries a user or password", hint="pass the token with --token-env VAR"
        )
    if token_env is not None and not _ENV_RE.fullmatch(token_env):
        raise UsageError(
            f"invalid variable name {token_env!r}", hint="e.g. --token-env ONTOSKILLS_SERVE_TOKEN"
        )
    return RemoteSpec(name, url, token_env)


def _written_values(spec: Spec) -> list[tuple[str, str]]:
    """(what it is, value) for every string of ours that goes into an entry as is."""
    if isinstance(spec, RemoteSpec):
        return [("--url", spec.url)]
    named = {"--home", "--lockfile"}
    values = [("the ontoskills command", spec.command)]
    for i, arg in enumerate(spec.args):
        flag = spec.args[i - 1] if i else ""
        values.append((f"the {flag} path" if flag in named else "the ontoskills command", arg))
    return values


def client_entry(client: str, spec: Spec) -> dict[str, Any]:
    """The entry in the shape each client documents (clients.py)."""
    known = CLIENT_TABLE[client]
    refuse_expansion(known, _written_values(spec))
    if isinstance(spec, LaunchSpec):
        entry = known.stdio(spec.command, list(spec.args))
    elif known.http is None:
        raise UsageError(
            f"{known.title} cannot reach a remote server from its config file",
            hint="drop --url: it starts `ontoskills serve` itself",
        )
    elif spec.token_env is not None and not known.token_env:
        raise UsageError(
            f"{known.title} has no documented way to read a token from the environment, and "
            "mcp-config never writes the token itself into a file",
            hint="drop --token-env and add the Authorization header in the client, or serve "
            "on loopback without a token",
        )
    else:
        entry = known.http(spec.url, spec.token_env)
    if known.fmt == "yaml":  # goose: the extension names itself
        entry = {**entry, "name": spec.name}
    return entry


def snippet(target: Target, spec: Spec) -> str:
    """What `--print` shows: a minimal file that holds just our entry."""
    entry = client_entry(target.client, spec)
    if target.is_toml:
        doc = tomlkit.document()
        doc[target.key] = _toml_super_table({spec.name: _toml_table(entry)})
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
        new, action = _merge_toml(target, old, spec.name, entry, managed)
    elif target.is_yaml:
        new, action = yamlconfig.merge(target, old, spec.name, entry, managed)
    else:
        new, action = _merge_json(target, old, spec.name, entry, managed)
    if action == "unchanged":
        return ApplyResult(target, entry, action, None)
    _check_round_trip(target, old, new, spec.name, entry, managed)
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
        raise _malformed(target, exc.message.removeprefix(f"{target.path}: ")) from None


def _canonical(value: Any) -> str:
    """A comparable form of a parsed document (NaN equals NaN, datetimes as text)."""
    return json.dumps(value, sort_keys=True, default=str, allow_nan=True)


def _check_round_trip(
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
        raise _malformed(
            target, f"cannot be written back as standard {_kind(target)} ({why})"
        ) from None
    servers = before.setdefault(target.key, {})
    servers[name] = merged_entry(servers.get(name), entry, managed)
    if _canonical(after) != _canonical(before):
        raise _malformed(target, f"would not read back as it was plus our entry as {_kind(target)}")


def _toml(data: bytes, target: Target) -> dict[str, Any]:
    return tomlio.loads(
        data, source=str(target.path), error=FormatError, max_bytes=MAX_CONFIG_BYTES
    )


def _kind(target: Target) -> str:
    return "TOML" if target.is_toml else "YAML" if target.is_yaml else "JSON"


def _malformed(target: Target, why: str) -> FormatError:
    return FormatError(
        f"{target.path}: {why}; not changing it",
        hint=f"fix the file, or add the entry by hand from `ontoskills mcp-config --client "
        f"{target.client} --print`",
    )


def _merge_json(
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
            raise _malformed(target, exc.message.split(": ", 1)[-1]) from None
    if not isinstance(doc, dict):
        raise _malformed(target, "the top level is not a JSON object")
    servers = doc.setdefault(target.key, {})
    if not isinstance(servers, dict):
        raise _malformed(target, f'"{target.key}" is not a JSON object')
    current = servers.get(name)
    if _covers(current, entry, managed):
        return b"", "unchanged"
    action: Literal["added", "updated"] = "updated" if current is not None else "added"
    servers[name] = merged_entry(current, entry, managed)
    bad = _non_finite(doc)
    if bad is not None:
        raise _malformed(target, f"{bad} is out of range for a JSON number; it cannot be kept")
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


def _covers(current: Any, entry: dict[str, Any], managed: Any = None) -> bool:
    """True when the existing entry already says everything ours says, and nothing of ours
    from another transport."""
    return (
        isinstance(current, dict)
        and all(current.get(k) == v for k, v in entry.items())
        and not _stale(current, entry, managed)
    )


def _toml_table(values: dict[str, Any], inline: bool = False) -> Any:
    table = tomlkit.inline_table() if inline else tomlkit.table()
    for key, value in values.items():
        table[key] = value
    return table


def _toml_super_table(children: dict[str, Any]) -> Any:
    table = tomlkit.table(is_super_table=True)
    for key, value in children.items():
        table[key] = value
    return table


def _merge_toml(
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
        raise _malformed(target, exc.message.removeprefix(f"{target.path}: ")) from None
    servers = doc.get(target.key)
    if servers is None:
        doc[target.key] = _toml_super_table({name: _toml_table(entry)})
        return tomlkit.dumps(doc).encode("utf-8"), "added"
    if not isinstance(servers, dict):
        raise _malformed(target, f"[{target.key}] is not a table")
    current = servers.get(name)
    plain = current.unwrap() if current is not None and hasattr(current, "unwrap") else current
    if _covers(plain, entry, managed):
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
            servers[name] = _toml_table(entry, isinstance(servers, tomlkit.items.InlineTable))
        return tomlkit.dumps(doc).encode("utf-8"), action
    except (ValueError, TypeError) as exc:
        raise _malformed(target, f"cannot merge our entry into it as written ({exc})") from None
