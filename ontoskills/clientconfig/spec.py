"""What `mcp-config` writes and where: the client's config file for a scope (`Target`), our
server as a command to start (`LaunchSpec`) or a URL (`RemoteSpec`), and the entry in the
shape each client documents (`client_entry`, over clients.py). Nothing here reads or writes
a file; write.py merges the entry in.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import UsageError
from ..paths import LOCKFILE_NAME
from .clients import CLIENTS as CLIENT_TABLE
from .clients import Scope, refuse_expansion

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


# A committed project file is read on every teammate's machine: it names the command, not
# this machine's path to it (as `npx`/`uvx` entries in the clients' docs do).
PORTABLE_COMMAND = "ontoskills"


def project_launch_spec(name: str, client: str) -> LaunchSpec:
    """The entry of a project's shared config file: `ontoskills serve` found on PATH, serving
    the project the client starts it in (or `--project ${workspaceFolder}` for a client that
    may start it elsewhere and names the folder itself). No absolute path of this machine."""
    if not _NAME_RE.fullmatch(name):
        raise UsageError(f"invalid server name {name!r}", hint="use letters, digits, - or _")
    var = CLIENT_TABLE[client].workspace_var
    args = ("--project", var, "serve") if var else ("serve",)
    return LaunchSpec(name=name, command=PORTABLE_COMMAND, args=args)


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
        if flag == "--project" and arg.startswith("${"):  # project_launch_spec's variable,
            continue  # meant to be expanded; a real path is absolute and cannot start so
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
