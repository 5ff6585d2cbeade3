"""Who may receive which token, and which plain-http hosts are acceptable.

Shared by the HTTP source, the git source and (later) publishing, so the rules live in one
place: `ONTOSKILLS_TOKEN` goes only to the registry's own host, `GITHUB_TOKEN` only to GitHub
hosts, and neither ever follows a redirect to another host or appears in a message.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import UsageError

ENV_TOKEN = "ONTOSKILLS_TOKEN"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
_GITHUB_HOSTS = ("github.com", "api.github.com")
_GITHUB_SUFFIXES = (".githubusercontent.com",)


@dataclass(frozen=True)
class Token:
    value: str
    env_var: str  # where it came from: named in hints, never the value itself

    def __repr__(self) -> str:  # keep the secret out of tracebacks and debug output
        return f"Token(env_var={self.env_var!r})"


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().rstrip(".")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) as browsers and curl compare them: another port or a downgrade to
    http on the same host is another origin (curl CVE-2022-27776)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    scheme = scheme[4:] if scheme.startswith("git+") else scheme
    try:
        port = parts.port
    except ValueError:
        return None
    return scheme, _host(url), port or _DEFAULT_PORTS.get(scheme)


def is_github_host(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host in _GITHUB_HOSTS or host.endswith(_GITHUB_SUFFIXES)


def is_loopback(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_for(url: str, registry_url: str, env: Mapping[str, str] | None = None) -> Token | None:
    """The token that may accompany a request to `url` on behalf of `registry_url`.

    Only a request to the registry's own origin (scheme, host, port) gets one:
    `ONTOSKILLS_TOKEN` first, else `GITHUB_TOKEN` when that host is GitHub's. A redirect to
    any other origin gets nothing.
    """
    source = env if env else os.environ
    host = _host(url)
    if not host or _origin(url) != _origin(registry_url):
        return None
    value = source.get(ENV_TOKEN, "").strip()
    if value:
        return Token(_header_safe(value, ENV_TOKEN), ENV_TOKEN)
    value = source.get(ENV_GITHUB_TOKEN, "").strip()
    if value and is_github_host(host):
        return Token(_header_safe(value, ENV_GITHUB_TOKEN), ENV_GITHUB_TOKEN)
    return None


def _header_safe(value: str, env_var: str) -> str:
    """A token goes into an Authorization header: visible ASCII only. Anything else was an
    internal error (non-ASCII) or five doomed retries (a line break); the value itself is a
    secret and is never printed."""
    if not all("!" <= c <= "~" for c in value):
        raise UsageError(
            f"{env_var} contains characters an HTTP header cannot carry "
            "(spaces, line breaks or non-ASCII)",
            hint=f"set {env_var} to the token alone",
        )
    return value


def auth_hint(url: str, sent: Token | None) -> str:
    if sent is not None:
        return f"the token in {sent.env_var} was refused; check it is valid and has read access"
    if is_github_host(_host(url)):
        return f"set {ENV_GITHUB_TOKEN} (or {ENV_TOKEN}) to a token with read access"
    return f"set {ENV_TOKEN} to a token for {_host(url) or 'this registry'}"


def check_transport(url: str, allow_insecure_http: bool, what: str = "registry") -> None:
    """Plain http:// is refused except on loopback or with --allow-insecure-http."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(parts.hostname or ""):
        raise UsageError(
            f"{what} {parts.hostname} uses plain http://; refusing to download unverified code",
            hint="use https://, or pass --allow-insecure-http if you trust the network",
        )
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"{what} URL must be http(s), got {parts.scheme or 'none'}://")
