"""Register `ontoskills serve` in an MCP client's config file (Claude Code, Cursor, VS Code,
Codex, Windsurf).

Every client keeps a map of server name -> launch spec; only the file, the map's key and the
entry's shape differ. We merge into what is there (other servers and settings untouched),
back the old file up as `<file>.bak`, never write duplicates (same name = replace, identical
entry = no write at all), and refuse to touch a file we cannot parse: clobbering a user's
config to add one entry would be worse than asking them to fix it.

The file is the user's: a symlink to it (dotfiles) stays a link and its target is replaced
atomically with the target's permissions; we only write standard JSON/TOML, and before
writing we parse what we are about to write with a strict parser and check it says exactly
the old document plus our entry. A config holding a value we cannot write back as it was
(a number like 1e400 that only parses as infinity) is refused, file untouched.
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

import tomlkit
import tomlkit.exceptions

from .. import jsonio, limits
from ..errors import FormatError, UsageError
from ..fsutil import atomic_write_bytes, atomic_write_through
from ..paths import LOCKFILE_NAME

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# ~/.claude.json keeps per-project history and grows to megabytes; far above that is not a
# config (or is /dev/zero behind a symlink).
MAX_CONFIG_BYTES = 64 * 1024 * 1024

Scope = Literal["project", "global"]
_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
CLIENTS: tuple[str, ...] = ("claude", "cursor", "vscode", "codex", "windsurf")
DEFAULT_SCOPE: dict[str, Scope] = {
    "claude": "project",
    "cursor": "project",
    "vscode": "project",
    "codex": "global",
    "windsurf": "global",
}


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


@dataclass(frozen=True)
class LaunchSpec:
    name: str
    command: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ApplyResult:
    target: Target
    entry: dict[str, Any]
    action: Literal["added", "updated", "unchanged"]
    backup: Path | None


def _vscode_user_dir(user_home: Path) -> Path:
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", user_home / "AppData/Roaming")) / "Code/User"
    if sys.platform == "darwin":
        return user_home / "Library/Application Support/Code/User"
    return Path(os.environ.get("XDG_CONFIG_HOME", user_home / ".config")) / "Code/User"


def resolve_target(
    client: str, scope: Scope | None, *, project_dir: Path, user_home: Path
) -> Target:
    """The config file for `client` at `scope` (default: the client's usual one)."""
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}", hint=f"use one of: {', '.join(CLIENTS)}")
    scope = scope or DEFAULT_SCOPE[client]
    project = {
        "claude": (project_dir / ".mcp.json", "mcpServers"),
        "cursor": (project_dir / ".cursor/mcp.json", "mcpServers"),
        "vscode": (project_dir / ".vscode/mcp.json", "servers"),
        "codex": (project_dir / ".codex/config.toml", "mcp_servers"),
    }
    global_ = {
        "claude": (user_home / ".claude.json", "mcpServers"),
        "cursor": (user_home / ".cursor/mcp.json", "mcpServers"),
        "vscode": (_vscode_user_dir(user_home) / "mcp.json", "servers"),
        "codex": (user_home / ".codex/config.toml", "mcp_servers"),
        "windsurf": (user_home / ".codeium/windsurf/mcp_config.json", "mcpServers"),
    }
    table = project if scope == "project" else global_
    if client not in table:
        raise UsageError(
            f"{client} has no {scope} MCP config file", hint="use --global for this client"
        )
    path, key = table[client]
    return Target(client=client, scope=scope, path=path.absolute(), key=key)


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
    name: str, *, home: Path | None, lockfile: Path | None, command: list[str] | None = None
) -> LaunchSpec:
    """`ontoskills [--home H] [--lockfile L] serve`; H/L only when not the defaults.

    The client starts the server with its own environment, so a home chosen through
    ONTOSKILLS_HOME here must be written out explicitly.
    """
    if not _NAME_RE.fullmatch(name):
        raise UsageError(f"invalid server name {name!r}", hint="use letters, digits, - or _")
    cmd = command or ontoskills_command()
    args: list[str] = cmd[1:]
    default_home = (Path.home() / ".ontoskills").absolute()
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


def client_entry(client: str, spec: LaunchSpec) -> dict[str, Any]:
    """The entry in the shape each client documents."""
    base: dict[str, Any] = {"command": spec.command, "args": list(spec.args)}
    if client in ("claude", "vscode"):
        return {"type": "stdio", **base}
    return base


def snippet(target: Target, spec: LaunchSpec) -> str:
    """What `--print` shows: a minimal file that holds just our entry."""
    entry = client_entry(target.client, spec)
    if target.is_toml:
        doc = tomlkit.document()
        doc[target.key] = _toml_super_table({spec.name: _toml_table(entry)})
        return tomlkit.dumps(doc)
    return json.dumps({target.key: {spec.name: entry}}, indent=2, ensure_ascii=False) + "\n"


def apply(target: Target, spec: LaunchSpec) -> ApplyResult:
    """Merge our entry into the target file, atomically, with a `.bak` of the old file."""
    entry = client_entry(target.client, spec)
    old = _read_config(target)
    if target.is_toml:
        new, action = _merge_toml(target, old, spec.name, entry)
    else:
        new, action = _merge_json(target, old, spec.name, entry)
    if action == "unchanged":
        return ApplyResult(target, entry, action, None)
    _check_round_trip(target, old, new, spec.name, entry)
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
    target: Target, old: bytes | None, new: bytes, name: str, entry: dict[str, Any]
) -> None:
    """What we write, read back by a strict parser, is the old document plus our entry."""
    try:
        if target.is_toml:
            before: Any = tomllib.loads(old.decode("utf-8")) if old else {}
            after: Any = tomllib.loads(new.decode("utf-8"))
        else:
            before = jsonio.loads(old, source=str(target.path)) if old and old.strip() else {}
            after = jsonio.loads(new, source=str(target.path))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, FormatError) as exc:
        raise _malformed(
            target, f"cannot be written back as standard {_kind(target)} ({exc})"
        ) from None
    servers = before.setdefault(target.key, {})
    current = servers.get(name)
    servers[name] = {**current, **entry} if isinstance(current, dict) else entry
    if _canonical(after) != _canonical(before):
        raise _malformed(target, f"would not read back as it was plus our entry as {_kind(target)}")


def _kind(target: Target) -> str:
    return "TOML" if target.is_toml else "JSON"


def _malformed(target: Target, why: str) -> FormatError:
    return FormatError(
        f"{target.path}: {why}; not changing it",
        hint=f"fix the file, or add the entry by hand from `ontoskills mcp-config --client "
        f"{target.client} --print`",
    )


def _merge_json(
    target: Target, old: bytes | None, name: str, entry: dict[str, Any]
) -> tuple[bytes, Literal["added", "updated", "unchanged"]]:
    doc: Any = {}
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
    if _covers(current, entry):
        return b"", "unchanged"
    action: Literal["added", "updated"] = "updated" if current is not None else "added"
    # Keep keys the user added to our entry (env, disabled, ...); ours win.
    servers[name] = {**current, **entry} if isinstance(current, dict) else entry
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


def _covers(current: Any, entry: dict[str, Any]) -> bool:
    """True when the existing entry already says everything ours says."""
    return isinstance(current, dict) and all(current.get(k) == v for k, v in entry.items())


def _toml_table(values: dict[str, Any]) -> Any:
    table = tomlkit.table()
    for key, value in values.items():
        table[key] = value
    return table


def _toml_super_table(children: dict[str, Any]) -> Any:
    table = tomlkit.table(is_super_table=True)
    for key, value in children.items():
        table[key] = value
    return table


def _merge_toml(
    target: Target, old: bytes | None, name: str, entry: dict[str, Any]
) -> tuple[bytes, Literal["added", "updated", "unchanged"]]:
    try:
        doc = tomlkit.parse(old.decode("utf-8")) if old else tomlkit.document()
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError) as exc:
        raise _malformed(target, f"invalid TOML ({exc})") from None
    servers = doc.get(target.key)
    if servers is None:
        doc[target.key] = _toml_super_table({name: _toml_table(entry)})
        return tomlkit.dumps(doc).encode("utf-8"), "added"
    if not isinstance(servers, dict):
        raise _malformed(target, f"[{target.key}] is not a table")
    current = servers.get(name)
    plain = current.unwrap() if current is not None and hasattr(current, "unwrap") else current
    if _covers(plain, entry):
        return b"", "unchanged"
    action: Literal["added", "updated"] = "updated" if current is not None else "added"
    if isinstance(current, dict):
        # Keep the user's other keys on our table (env, startup_timeout_sec, ...).
        for key, value in entry.items():
            current[key] = value
    else:
        servers[name] = _toml_table(entry)
    return tomlkit.dumps(doc).encode("utf-8"), action
