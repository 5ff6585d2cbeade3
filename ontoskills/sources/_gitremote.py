"""Talking to git remotes with pygit2: which remotes are network ones, credentials, errors.

Reused by publishing (push) as well as the git source (fetch): tokens come from
`ONTOSKILLS_TOKEN` / `GITHUB_TOKEN` under the same host rules as HTTP (see `_auth.py`) and
are handed to libgit2 through RemoteCallbacks (user `x-access-token`), never put in a URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import pygit2
from pygit2.enums import CredentialType

from ..errors import AuthError, NetworkError, NotFoundError, OntoskillsError, UsageError
from ..paths import expand_user
from ._auth import Origin, Token, auth_hint, token_for

_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")
_NETWORK_SCHEMES = ("http", "https", "ssh", "git")
_AUTH_RE = re.compile(r"\b(401|403)\b|authenticat|unauthori[sz]ed|credential", re.I)
_NOT_FOUND_RE = re.compile(
    r"\b404\b|not found|could not find repository|not a git repository|failed to resolve path"
    r"|does not exist",
    re.I,
)
# A web server answering a git URL with a page: the location is not a git repository.
_NOT_GIT_RE = re.compile(r"content-type|packet line|pkt-line|bad packet", re.I)


def split_git_url(url: str) -> tuple[str, str | None]:
    """`git+https://host/repo.git#ref` -> ("https://host/repo.git", "ref")."""
    base, _, ref = url.partition("#")
    if base.startswith("git+"):
        base = base[4:]
    return base, (ref or None)


def is_network_remote(url: str) -> bool:
    return bool(_SCP_RE.match(url)) or urlsplit(url).scheme in _NETWORK_SCHEMES


def local_remote_path(url: str) -> Path:
    raw = url[len("file://") :] if url.startswith("file://") else url
    return expand_user(raw).absolute()


def remote_host(url: str) -> str:
    if _SCP_RE.match(url):
        return url.split("@", 1)[1].split(":", 1)[0]
    return urlsplit(url).hostname or url


class TokenCallbacks(pygit2.RemoteCallbacks):
    """Offer the host's token once (libgit2 would otherwise ask again forever)."""

    def __init__(
        self,
        remote_url: str,
        env: Mapping[str, str] | None = None,
        *,
        origins: frozenset[Origin],
    ) -> None:
        super().__init__()
        self.remote_url = remote_url
        self.env = env
        self.origins = origins  # where ONTOSKILLS_TOKEN may go (_auth.token_origins)
        self.offered: Token | None = None
        self._asked = 0

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> pygit2.UserPass | pygit2.KeypairFromAgent:
        self._asked += 1
        host = remote_host(self.remote_url)
        if self._asked > 1:  # what we offered was rejected
            raise AuthError(
                f"{host} refused access to the git repository",
                hint=auth_hint(self.remote_url, self.offered, self.env, self.origins),
            )
        if allowed_types & CredentialType.USERPASS_PLAINTEXT:
            # checked per URL libgit2 asks for: a token never goes to another host
            self.offered = token_for(url, self.remote_url, self.env, self.origins)
            if self.offered is None:
                raise AuthError(
                    f"{host} requires authentication",
                    hint=auth_hint(self.remote_url, None, self.env, self.origins),
                )
            return pygit2.UserPass("x-access-token", self.offered.value)
        if allowed_types & CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        raise AuthError(
            f"{host} asks for credentials ontoskills cannot provide",
            hint=auth_hint(self.remote_url, None),
        )


def git_error(
    exc: Exception, url: str, action: str = "fetch", registry: str | None = None
) -> OntoskillsError:
    """Map a libgit2 failure to our exit codes; the message never carries a token."""
    if isinstance(exc, OntoskillsError):
        return exc
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    host = remote_host(url) if is_network_remote(url) else url
    # the repository, not just its host: `github:obra/nope` must not read "127.0.0.1 not found"
    parts = urlsplit(url)
    where = f"{parts.hostname}{parts.path}" if parts.hostname else host
    named = f"registry {registry} ({where})" if registry else where
    if _NOT_GIT_RE.search(text):  # exit 2: not a registry, not a network failure
        return UsageError(
            f"{named} is not a git repository ({text})",
            hint="check the registry URL: a git registry is a repository URL "
            "(https://host/org/repo.git), a static one serves index.json",
        )
    if _AUTH_RE.search(text):
        return AuthError(f"{host}: git {action} was refused ({text})", hint=auth_hint(url, None))
    if _NOT_FOUND_RE.search(text):
        return NotFoundError(
            f"{f'registry {registry}: ' if registry else ''}git repository {where} not found "
            f"({text})",
            hint="check the registry URL",
        )
    if not is_network_remote(url):
        return NetworkError(f"git {action} from {host} failed ({text})")
    return NetworkError(
        f"{host}: git {action} failed ({text})",
        hint="check your connection and the URL, or use --offline with a cached clone",
    )
