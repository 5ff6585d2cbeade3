"""Who may receive which token, and which plain-http hosts are acceptable.

Shared by the HTTP source, the git source and publishing, so the rules live in one place:
`ONTOSKILLS_TOKEN` goes only to the origins (scheme, host, port) of registries the user
configured (`registry add`, config.toml, the built-in one when it is in use) or listed in
`ONTOSKILLS_TOKEN_FOR`, never to a host that only a lockfile or an ad-hoc `--registry` names
(`token_origins` builds that set once per command: `SourceOptions.token_origins`);
`GITHUB_TOKEN` only to GitHub's own hosts; neither ever follows a redirect to another origin
or appears in a message.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import UsageError
from ..redact import redact_url

ENV_TOKEN = "ONTOSKILLS_TOKEN"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TOKEN_FOR = "ONTOSKILLS_TOKEN_FOR"  # explicit consent: origins an ad-hoc registry may have
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
Origin = tuple[str, str, int | None]
# ONTOSKILLS_TOKEN_FOR entries: exactly scheme://host[:port] (ASCII; a trailing / allowed).
_CONSENT = re.compile(
    r"(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}))?/?"
)


def origin_of(url: str) -> Origin | None:
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


def origin_text(url: str) -> str:
    """`scheme://host[:port]` of a URL, as ONTOSKILLS_TOKEN_FOR takes it."""
    origin = origin_of(url)
    if origin is None:
        return url
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port == _DEFAULT_PORTS.get(scheme) else f":{port}")


def token_origins(
    configured: Iterable[str], env: Mapping[str, str] | None = None
) -> frozenset[Origin]:
    """Where ONTOSKILLS_TOKEN may go in this command: the http(s) origins of the configured
    registries' URLs, and each origin ONTOSKILLS_TOKEN_FOR lists (exit 2 on any entry that is
    not exactly `scheme://host[:port]`: a looser match would be consent nobody gave)."""
    out = set()
    for url in configured:
        origin = origin_of(url) if "://" in url else None
        # oci://: where ONTOSKILLS_OCI_USERNAME/PASSWORD/TOKEN may go (sources/_oci.py)
        if origin is not None and (origin[0] in _DEFAULT_PORTS or origin[0] == "oci") and origin[1]:
            out.add(origin)
    source = env if env else os.environ
    for entry in source.get(ENV_TOKEN_FOR, "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        m = _CONSENT.fullmatch(entry)
        if m is None or (m[3] is not None and not 0 < int(m[3]) <= 65535):
            raise UsageError(
                f"{ENV_TOKEN_FOR}: {redact_url(entry)[:200]!r} is not an origin",
                hint=f"list origins as scheme://host[:port], comma-separated (e.g. "
                f"{ENV_TOKEN_FOR}=https://registry.example.com,http://127.0.0.1:8080)",
            )
        origin = origin_of(entry.lower())
        if origin is not None:
            out.add(origin)
    return frozenset(out)


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


def token_for(
    url: str,
    registry_url: str,
    env: Mapping[str, str] | None = None,
    origins: frozenset[Origin] = frozenset(),
) -> Token | None:
    """The token that may accompany a request to `url` on behalf of `registry_url`.

    Only a request to the registry's own origin (scheme, host, port) gets one:
    `ONTOSKILLS_TOKEN` when that origin is one of `origins` (configured or consented,
    `token_origins`), else `GITHUB_TOKEN` when that host is GitHub's. A redirect to any
    other origin gets nothing.
    """
    source = env if env else os.environ
    host = _host(url)
    here = origin_of(url)
    if not host or here is None or here != origin_of(registry_url):
        return None
    value = source.get(ENV_TOKEN, "").strip()
    # A value no header can carry is exit 2 even where it is withheld: a bad setting is
    # refused wherever it is read, not only on the hosts that would get it.
    if value and _header_safe(value, ENV_TOKEN) and here in origins:
        return Token(value, ENV_TOKEN)
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


def auth_hint(
    url: str,
    sent: Token | None,
    env: Mapping[str, str] | None = None,
    origins: frozenset[Origin] = frozenset(),
) -> str:
    if sent is not None:
        return f"the token in {sent.env_var} was refused; check it is valid and has read access"
    if (env if env else os.environ).get(ENV_TOKEN, "").strip():
        if origin_of(url) in origins:  # it was sent there: the refusal came from a redirect
            return (
                f"{ENV_TOKEN} never follows a redirect to another host; ask the registry's "
                "maintainers to serve its files from its own origin"
            )
        return (
            f"{ENV_TOKEN} is sent only to registries you configured: add this one with "
            f"`ontoskills registry add NAME URL`, or allow its origin with "
            f"{ENV_TOKEN_FOR}={origin_text(url)}"
        )
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
