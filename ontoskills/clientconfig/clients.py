"""Every MCP client `mcp-config` knows: where it keeps its servers, and the entry it expects,
for a local server (stdio: `ontoskills serve`) and, where the client supports remote
servers, for `serve --transport http` (`--url`). Each shape follows the client's own
documentation (the `doc` URL; tests/server/mcp_client_docs.py holds the documented examples
the shapes are checked against).

A bearer token is never written into a config file: with `--token-env VAR` the entry names
the variable, in the client's own syntax (`${VAR}`, `${env:VAR}`, `{env:VAR}`, Codex's
`bearer_token_env_var`); a client with no documented way to read one from the environment
refuses `--token-env`.

The same syntax works against us when a path we write holds it: Claude Code would start
`--home /srv/a${HOME}b` on the path `/srv/a/root/b`. `expands` is what each client
substitutes in the strings of its file (from its docs or, where they say less, its source);
none documents an escape, so mcp-config refuses such a value (exit 2) instead of writing it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..choices import Choice
from ..errors import UsageError

Scope = Literal["project", "global"]
Format = Literal["json", "toml", "yaml"]
Entry = dict[str, Any]


def _appdata(home: Path) -> Path:
    return Path(os.environ.get("APPDATA", home / "AppData/Roaming"))


def _xdg(home: Path) -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config"))


def _app_support(home: Path, name: str) -> Path:
    """Per-user application folder: macOS Application Support, Windows APPDATA, else XDG."""
    if sys.platform == "darwin":
        return home / "Library/Application Support" / name
    if sys.platform == "win32":
        return _appdata(home) / name
    return _xdg(home) / name


def vscode_user_dir(home: Path) -> Path:
    return _app_support(home, "Code/User")


def _header(token_env: str | None, value: Callable[[str], str]) -> Entry:
    return {"headers": {"Authorization": f"Bearer {value(token_env)}"}} if token_env else {}


@dataclass(frozen=True)
class Client:
    id: str
    title: str
    doc: str  # the documentation this client's file and entry follow
    key: str  # the map of servers in the file
    fmt: Format
    project: str | None  # file relative to the project folder; None: no project scope
    user: Callable[[Path], Path] | None  # user-wide file from the home folder
    default: Scope
    stdio: Callable[[str, list[str]], Entry]
    # (url, token env var or None) -> entry; None when the client cannot reach a remote
    # server from its config file.
    http: Callable[[str, str | None], Entry] | None = None
    token_env: bool = True  # the client can read a header value from the environment
    new_file: tuple[tuple[str, Any], ...] = ()  # top-level keys for a file we create
    # What the client substitutes in the command, args and url we write (None: read as
    # written), and how its docs spell it (for the refusal).
    expands: re.Pattern[str] | None = None
    syntax: str = ""
    # How a committed project entry names the project folder: the client's own variable for
    # it (Cursor and VS Code document `${workspaceFolder}` and may start servers elsewhere),
    # or None when the client starts a project's servers in the folder it runs in, where
    # `serve` finds the project from its working folder upward (Claude Code, Gemini CLI,
    # opencode, Codex, Zed).
    workspace_var: str | None = None


# `${` opens every form these clients expand (`${VAR}`, `${VAR:-default}`, `${env:VAR}`,
# `${workspaceFolder}`, `${file:PATH}`): refused whatever follows, so a form a new client
# version adds is refused too.
_DOLLAR_BRACE = re.compile(r"\$\{")


def _env_colon(var: str) -> str:
    return f"${{env:{var}}}"


def _command(cmd: str, args: list[str]) -> Entry:
    return {"command": cmd, "args": args}


CLIENTS: dict[str, Client] = {
    c.id: c
    for c in (
        Client(
            "claude",
            "Claude Code",
            "https://code.claude.com/docs/en/mcp",
            "mcpServers",
            "json",
            ".mcp.json",
            lambda home: home / ".claude.json",
            "project",
            lambda cmd, args: {"type": "stdio", **_command(cmd, args)},
            lambda url, env: {"type": "http", "url": url, **_header(env, lambda v: f"${{{v}}}")},
            # docs: "Environment variable expansion in .mcp.json" (command, args, env, url,
            # headers); ~/.claude.json is read by the same code, so it is held to it too.
            expands=_DOLLAR_BRACE,
            syntax="${VAR}, ${VAR:-default}",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            "https://modelcontextprotocol.io/docs/develop/connect-local-servers",
            "mcpServers",
            "json",
            None,
            lambda home: _app_support(home, "Claude") / "claude_desktop_config.json",
            "global",
            _command,
            None,  # remote servers are added in the app (Settings > Connectors), not the file
            token_env=False,
            # no substitution documented for claude_desktop_config.json: read as written
        ),
        Client(
            "cursor",
            "Cursor",
            "https://cursor.com/docs/mcp",
            "mcpServers",
            "json",
            ".cursor/mcp.json",
            lambda home: home / ".cursor/mcp.json",
            "project",
            _command,
            lambda url, env: {"url": url, **_header(env, lambda v: f"${{env:{v}}}")},
            # docs: "Config interpolation" in command, args, env, url and headers
            expands=_DOLLAR_BRACE,
            syntax="${env:NAME}, ${userHome}, ${workspaceFolder}, ${/}",
            workspace_var="${workspaceFolder}",
        ),
        Client(
            "vscode",
            "VS Code",
            "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
            "servers",
            "json",
            ".vscode/mcp.json",
            lambda home: vscode_user_dir(home) / "mcp.json",
            "project",
            lambda cmd, args: {"type": "stdio", **_command(cmd, args)},
            lambda url, env: {
                "type": "http",
                "url": url,
                **_header(env, lambda v: f"${{env:{v}}}"),
            },
            # docs: predefined variables (Variables reference) in the server configuration
            expands=_DOLLAR_BRACE,
            syntax="${workspaceFolder}, ${env:NAME}, ${input:ID}",
            workspace_var="${workspaceFolder}",
        ),
        Client(
            "windsurf",
            "Windsurf",
            "https://docs.windsurf.com/windsurf/cascade/mcp",
            "mcpServers",
            "json",
            None,
            lambda home: home / ".codeium/windsurf/mcp_config.json",
            "global",
            _command,
            lambda url, env: {"serverUrl": url, **_header(env, lambda v: f"${{env:{v}}}")},
            # docs: config interpolation in command, args, env, serverUrl, url and headers
            expands=_DOLLAR_BRACE,
            syntax="${env:NAME}, ${file:PATH}",
        ),
        Client(
            "codex",
            "Codex",
            "https://developers.openai.com/codex/mcp",
            "mcp_servers",
            "toml",
            ".codex/config.toml",  # read in trusted projects only
            lambda home: Path(os.environ.get("CODEX_HOME", home / ".codex")) / "config.toml",
            "global",
            _command,
            lambda url, env: {"url": url, **({"bearer_token_env_var": env} if env else {})},
            # docs/config.md: args reach the process as written, "$VAR or ${VAR} ... passed
            # literally, not expanded"
        ),
        Client(
            "zed",
            "Zed",
            "https://zed.dev/docs/ai/mcp",
            "context_servers",
            "json",
            ".zed/settings.json",
            lambda home: (
                _appdata(home) / "Zed/settings.json"
                if sys.platform == "win32"
                else _xdg(home) / "zed/settings.json"
            ),
            "global",
            lambda cmd, args: {**_command(cmd, args), "env": {}},
            lambda url, env: {"url": url},
            token_env=False,
            # no substitution documented in context_servers: read as written
        ),
        Client(
            "gemini",
            "Gemini CLI",
            "https://geminicli.com/docs/tools/mcp-server/",
            "mcpServers",
            "json",
            ".gemini/settings.json",
            lambda home: home / ".gemini/settings.json",
            "project",
            _command,
            lambda url, env: {"httpUrl": url, **_header(env, lambda v: f"${{{v}}}")},
            # docs: every string of settings.json; packages/cli/src/utils/envVarResolver.ts
            # matches /\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})/ (JS \w: ASCII letters, digits, _)
            expands=re.compile(r"\$[A-Za-z0-9_{]"),
            syntax="$VAR, ${VAR}, ${VAR:-default}",
        ),
        Client(
            "opencode",
            "opencode",
            "https://opencode.ai/docs/mcp-servers/",
            "mcp",
            "json",
            "opencode.json",
            lambda home: _xdg(home) / "opencode/opencode.json",
            "project",
            lambda cmd, args: {"type": "local", "command": [cmd, *args], "enabled": True},
            lambda url, env: {
                "type": "remote",
                "url": url,
                "enabled": True,
                **_header(env, lambda v: f"{{env:{v}}}"),
            },
            new_file=(("$schema", "https://opencode.ai/config.json"),),
            # docs: config variables; src/config/variable.ts substitutes /\{env:([^}]+)\}/ and
            # /\{file:[^}]+\}/ in the file's text, before it is parsed
            expands=re.compile(r"\{(?:env|file):"),
            syntax="{env:VAR}, {file:PATH}",
        ),
        Client(
            "goose",
            "goose",
            "https://block.github.io/goose/docs/guides/config-files",
            "extensions",
            "yaml",
            None,
            lambda home: (
                _appdata(home) / "Block/goose/config/config.yaml"
                if sys.platform == "win32"
                else _xdg(home) / "goose/config.yaml"
            ),
            "global",
            lambda cmd, args: {
                "enabled": True,
                "type": "stdio",
                "cmd": cmd,
                "args": args,
                "envs": {},
                "timeout": 300,
            },
            lambda url, env: {
                "enabled": True,
                "type": "streamable_http",
                "uri": url,
                "envs": {},
                "timeout": 300,
            },
            token_env=False,
            # crates/goose/src/agents/extension_manager.rs: cmd and args go to the process as
            # written, uri too; only header values are substituted (we write none)
        ),
        Client(
            "cline",
            "Cline",
            "https://docs.cline.bot/mcp/configuring-mcp-servers",
            "mcpServers",
            "json",
            None,
            lambda home: (
                vscode_user_dir(home)
                / "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
            ),
            "global",
            lambda cmd, args: {**_command(cmd, args), "disabled": False, "autoApprove": []},
            lambda url, env: {"type": "streamableHttp", "url": url, "disabled": False},
            token_env=False,
            # src/services/mcp/utils.ts substituteEnvironmentVariables: /\$\{env:([^}]+)\}/
            expands=_DOLLAR_BRACE,
            syntax="${env:VAR}",
        ),
    )
}


OURS = object()  # managed_keys: a key that is always ours, whatever its value
_SOFT = ("env", "envs", "disabled", "autoApprove", "enabled", "timeout")


def managed_keys(client: Client) -> dict[str, Any]:
    """Every key our entries use for `client` (both transports), with the value we write for
    the ones a user may have set themselves (env, timeout, ...): what an update may drop when
    the transport changes. The user's own keys, and ours they changed, stay."""
    shapes = [client.stdio("x", [])]
    if client.http is not None:
        shapes.append(client.http("http://x", "X" if client.token_env else None))
    keys: dict[str, Any] = {"name": OURS, "bearer_token_env_var": OURS, "headers": OURS}
    for shape in shapes:
        for key, value in shape.items():
            keys[key] = value if key in _SOFT else OURS
    return keys


def refuse_expansion(client: Client, values: Iterable[tuple[str, str]]) -> None:
    """Exit 2 for a value (what, text) the client would expand into another one."""
    if client.expands is None:
        return
    for what, value in values:
        found = client.expands.search(value)
        if found is None:
            continue
        char = found.group()[0]
        if what == "--url":
            hint = f"use a URL without {char!r}"
        elif what.startswith("the --"):  # the --home / --lockfile path
            hint = f"use a {what.split()[1]} path without {char!r}"
        else:
            hint = f"run an ontoskills installed under a path without {char!r}"
        raise UsageError(
            f"{what} {value!r} holds {found.group()!r}: {client.title} expands "
            f"{client.syntax} in its config file, so it would read another path there",
            hint=hint,
        )


# The `--client` words, derived from the table so the two cannot drift: a client added above
# is accepted at once, and typer lists every one when a word is wrong (exit 2). Built at run
# time, so mypy sees a Choice without members (`str(name)` is the table key).
if TYPE_CHECKING:

    class ClientName(Choice): ...

else:
    ClientName = Choice("ClientName", {c.upper().replace("-", "_"): c for c in CLIENTS})
