"""The OCI distribution API as registries of kind `oci` use it (sources/oci.py reads,
publish/oci.py pushes): manifests by tag or digest, blobs verified against their digest,
monolithic uploads, and the auth a registry asks for.

httpx directly, not `oras`: the handful of endpoints we need is ~300 lines, while oras-py
brings `requests`, `jsonschema` and a docker-config reader we would have to keep away from
users' credentials; one HTTP stack (httpx, already ours) keeps retries, timeouts and
redaction in one place.

Auth (the Docker flow): a 401 with `WWW-Authenticate: Bearer realm=...,service=...,scope=...`
gets a token from the realm (with basic credentials when the environment has some for this
host), cached per scope; a 401 with `Basic` gets the credentials directly. Credentials come
from `ONTOSKILLS_OCI_USERNAME` / `ONTOSKILLS_OCI_PASSWORD` (or `ONTOSKILLS_OCI_TOKEN`, a
bearer token), each optionally per host: `ONTOSKILLS_OCI_USERNAME_<HOST>` with HOST upper-
cased and every other character `_` (`REGISTRY_EXAMPLE_COM_5000`) wins over the plain name.
The plain names go only to registries the user configured (`registry add`, config.toml) or
publishes to, like ONTOSKILLS_TOKEN; the per-host names are consent for that host. They go
only to the registry's own origin, and basic credentials to a token realm only on
that same host or over https; tokens are bound to the origin that issued the challenge and
never printed (their Token repr hides the value).
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import httpx

from .. import jsonio
from ..errors import (
    AuthError,
    IntegrityError,
    LimitExceededError,
    NetworkError,
    NotFoundError,
    UsageError,
)
from ..fsutil import CHUNK
from ._auth import Token, _header_safe, is_loopback, origin_of
from ._retry import Deadline, RetryPolicy, parse_retry_after

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")  # distribution's name rule
_PARAM = re.compile(r'([A-Za-z]+)="([^"]*)"')


@dataclass(frozen=True)
class OciLocation:
    base: str  # http(s)://host[:port]
    namespace: str  # repository prefix, e.g. "skills" or "team/skills"

    def repo(self, *parts: str) -> str:
        name = "/".join([self.namespace, *parts]).strip("/")
        for part in name.split("/"):
            if not _COMPONENT.match(part):
                raise UsageError(
                    f"{part!r} cannot be part of an OCI repository name ({name})",
                    hint="OCI names are lowercase letters, digits and single . _ - separators",
                )
        return name


def parse_location(url: str, allow_insecure_http: bool) -> OciLocation:
    """oci://host[:port]/namespace -> https (plain http on loopback, or when allowed)."""
    parts = urlsplit(url)
    if parts.scheme != "oci" or not parts.hostname or parts.query or parts.fragment:
        raise UsageError(
            f"not an OCI registry URL: {url[:80]!r}", hint="write oci://host[:port]/namespace"
        )
    scheme = "http" if is_loopback(parts.hostname) or allow_insecure_http else "https"
    ns = parts.path.strip("/")
    loc = OciLocation(f"{scheme}://{parts.netloc}", ns)
    if ns:
        loc.repo()  # checks every component
    return loc


def _env_key(host: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", host.upper())


def credentials(
    env: Mapping[str, str], netloc: str, *, plain: bool
) -> tuple[tuple[str, str] | None, Token | None]:
    """(basic user/password, bearer token) the environment holds for this host: the
    per-host variables always, the plain ones only when `plain` (a registry the user
    configured or publishes to, as for ONTOSKILLS_TOKEN: sources/_auth.py)."""
    suffix = _env_key(netloc)

    def get(name: str) -> tuple[str, str] | None:
        for var in (f"{name}_{suffix}", name) if plain else (f"{name}_{suffix}",):
            value = env.get(var, "")
            if value:
                return var, value
        return None

    user, password, token = (
        get("ONTOSKILLS_OCI_USERNAME"),
        get("ONTOSKILLS_OCI_PASSWORD"),
        get("ONTOSKILLS_OCI_TOKEN"),
    )
    basic = (user[1], password[1]) if user and password else None
    bearer = Token(_header_safe(token[1], token[0]), token[0]) if token else None
    return basic, bearer


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = header.strip().partition(" ")
    return scheme.lower(), dict(_PARAM.findall(rest))


class OciClient:
    def __init__(
        self,
        loc: OciLocation,
        env: Mapping[str, str],
        *,
        timeout: float,
        name: str,
        plain_credentials: bool,
        retries: int = 0,
        deadline: Deadline | None = None,
    ) -> None:
        self.loc = loc
        self.name = name
        self.retry = RetryPolicy.from_env(retries)
        self.deadline = deadline
        netloc = urlsplit(loc.base).netloc
        self.basic, self.bearer = credentials(env, netloc, plain=plain_credentials)
        self._tokens: dict[str, Token] = {}  # scope -> token from this origin's realm
        self._auth: str | None = None  # the Authorization header that worked last
        self.client = httpx.Client(timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------ requests
    def url(self, path: str) -> str:
        return f"{self.loc.base}/v2/{path}"

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
        stream: bool = False,
        what: str,
    ) -> httpx.Response:
        """One request, answering the registry's auth challenge once; redirects (blob
        storage) are followed without our Authorization header to another origin."""
        hdrs = dict(headers or {})
        ours = origin_of(url) == origin_of(self.loc.base)  # an upload URL may be elsewhere
        if self._auth and ours:
            hdrs["Authorization"] = self._auth
        resp = self._send(method, url, hdrs, content, stream, what)
        if resp.status_code == 401 and ours:
            resp.close()
            challenge = resp.headers.get("WWW-Authenticate", "")
            auth = self._answer(challenge, what, stale=hdrs.get("Authorization"))
            if auth is not None:
                self._auth = auth
                hdrs["Authorization"] = auth
                resp = self._send(method, url, hdrs, content, stream, what)
        if resp.status_code in (401, 403):
            resp.close()
            raise AuthError(
                f"{self.name}: {what}: access denied (HTTP {resp.status_code})",
                hint="set ONTOSKILLS_OCI_USERNAME_{h} and ONTOSKILLS_OCI_PASSWORD_{h} (or "
                "ONTOSKILLS_OCI_TOKEN_{h}); the names without the host suffix go only to a "
                "registry you configured with `ontoskills registry add`".format(
                    h=_env_key(urlsplit(self.loc.base).netloc)
                ),
            )
        return resp

    def _send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        stream: bool,
        what: str,
    ) -> httpx.Response:
        for _ in range(5):  # redirects by hand: Authorization never leaves the origin
            resp = self._attempts(method, url, headers, content, stream, what)
            if resp.status_code not in (301, 302, 303, 307, 308) or method != "GET":
                return resp
            resp.close()
            target = urljoin(url, resp.headers.get("Location", ""))
            if origin_of(target) != origin_of(url):
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            url = target
        raise NetworkError(f"{self.name}: {what}: too many redirects")

    def _attempts(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        stream: bool,
        what: str,
    ) -> httpx.Response:
        """One request with retries (GET/HEAD only: an upload is not replayed) on transport
        errors, 429 and 5xx, with backoff and `Retry-After`, within the command's deadline."""
        retries = self.retry.retries if method in ("GET", "HEAD") else 0
        for attempt in range(retries + 1):
            last = attempt == retries or (self.deadline is not None and self.deadline.expired)
            try:
                req = self.client.build_request(method, url, headers=headers, content=content)
                resp = self.client.send(req, stream=stream)
            except httpx.HTTPError as exc:
                if last:
                    raise NetworkError(
                        f"{self.name}: {what}: {type(exc).__name__}",
                        hint="check the network and the registry URL",
                    ) from None
                time.sleep(self._wait(attempt, None))
                continue
            if last or not (resp.status_code == 429 or resp.status_code >= 500):
                return resp
            after = parse_retry_after(resp.headers.get("Retry-After"))
            resp.close()
            time.sleep(self._wait(attempt, after))
        raise AssertionError("unreachable")

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        wait = self.retry.delay(attempt, retry_after)
        return wait if self.deadline is None else min(wait, self.deadline.remaining())

    def _answer(self, header: str, what: str, stale: str | None = None) -> str | None:
        scheme, params = _challenge(header)
        if scheme == "basic":
            if self.basic is None:
                return None
            pair = f"{self.basic[0]}:{self.basic[1]}".encode()
            return "Basic " + base64.b64encode(pair).decode()
        if scheme != "bearer":
            return None
        if self.bearer is not None:
            return f"Bearer {self.bearer.value}"
        scope = params.get("scope", "")
        if scope in self._tokens and stale == f"Bearer {self._tokens[scope].value}":
            del self._tokens[scope]  # refused: expired, or for another scope; ask again
        if scope not in self._tokens:
            self._tokens[scope] = self._token(params, what)
        return f"Bearer {self._tokens[scope].value}"

    def _token(self, params: dict[str, str], what: str) -> Token:
        realm = params.get("realm", "")
        parts = urlsplit(realm)
        same_host = parts.hostname == urlsplit(self.loc.base).hostname
        if parts.scheme not in ("http", "https") or (parts.scheme == "http" and not same_host):
            raise AuthError(
                f"{self.name}: {what}: the registry's token realm is not https: refused",
                hint="a registry's token service must be https (or on the registry's host)",
            )
        query = {k: v for k, v in params.items() if k in ("service", "scope")}
        headers = {}
        if self.basic is not None and (same_host or parts.scheme == "https"):
            pair = f"{self.basic[0]}:{self.basic[1]}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        url = realm + ("&" if "?" in realm else "?") + urlencode(query)
        try:
            resp = self.client.get(url, headers=headers)
        except httpx.HTTPError as exc:
            raise NetworkError(f"{self.name}: token service: {type(exc).__name__}") from None
        if resp.status_code != 200:
            raise AuthError(
                f"{self.name}: {what}: the token service refused (HTTP {resp.status_code})",
                hint="check ONTOSKILLS_OCI_USERNAME / ONTOSKILLS_OCI_PASSWORD",
            )
        body = jsonio.loads(resp.content, source="token response", max_bytes=1024 * 1024)
        value = body.get("token") or body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(value, str) or not value:
            raise AuthError(f"{self.name}: the token service answered no token")
        return Token(_header_safe(value, "the registry's token"), "the token service")

    def check(self, resp: httpx.Response, what: str) -> None:
        if resp.status_code == 404:
            resp.close()
            raise NotFoundError(f"{self.name}: {what} not found", hint="check the name and version")
        if resp.status_code >= 300:
            resp.close()
            raise NetworkError(f"{self.name}: {what}: HTTP {resp.status_code}")

    # ------------------------------------------------------------------ reads
    def manifest(self, repo: str, ref: str) -> tuple[bytes, str, dict[str, Any]]:
        """(bytes, digest, parsed) of an image manifest; a digest ref is verified."""
        what = f"{repo}:{ref}" if not ref.startswith("sha256:") else f"{repo}@{ref[:19]}"
        resp = self.request(
            "GET",
            self.url(f"{repo}/manifests/{ref}"),
            headers={"Accept": MANIFEST_TYPE},
            what=what,
        )
        self.check(resp, what)
        data = resp.content
        if len(data) > MAX_MANIFEST_BYTES:
            raise LimitExceededError(f"{self.name}: {what}: manifest over {MAX_MANIFEST_BYTES}")
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if ref.startswith("sha256:") and digest != ref:
            raise IntegrityError(
                f"{self.name}: {what}: the manifest is not the one its digest names: tampered",
                hint="nothing was installed; tell the registry's maintainers",
            )
        parsed = jsonio.loads(data, source=f"{self.name}: {what}", max_bytes=MAX_MANIFEST_BYTES)
        if not isinstance(parsed, dict):
            raise IntegrityError(f"{self.name}: {what}: not an image manifest")
        return data, digest, parsed

    def blob_to(self, repo: str, digest: str, dest: Path, *, max_bytes: int, what: str) -> int:
        """Stream a blob into dest; its sha256 must be its digest (else exit 4)."""
        check_digest(digest, what)
        resp = self.request("GET", self.url(f"{repo}/blobs/{digest}"), stream=True, what=what)
        try:
            self.check(resp, what)
            h, size = hashlib.sha256(), 0
            with open(dest, "wb") as out:
                for chunk in resp.iter_bytes(CHUNK):
                    size += len(chunk)
                    if size > max_bytes:
                        raise LimitExceededError(f"{self.name}: {what} exceeds {max_bytes} bytes")
                    h.update(chunk)
                    out.write(chunk)
        except httpx.HTTPError as exc:
            raise NetworkError(f"{self.name}: {what}: {type(exc).__name__}") from None
        finally:
            resp.close()
        if "sha256:" + h.hexdigest() != digest:
            raise IntegrityError(
                f"{self.name}: {what}: the blob is not the one its digest {digest[:19]}… "
                "names: tampered",
                hint="nothing was installed; the registry serves altered content: tell its "
                "maintainers",
            )
        return size

    def blob(self, repo: str, digest: str, *, max_bytes: int, what: str) -> bytes:
        check_digest(digest, what)
        resp = self.request("GET", self.url(f"{repo}/blobs/{digest}"), what=what)
        self.check(resp, what)
        data = resp.content
        if len(data) > max_bytes:
            raise LimitExceededError(f"{self.name}: {what} exceeds {max_bytes} bytes")
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise IntegrityError(
                f"{self.name}: {what}: the blob is not the one its digest names: tampered",
                hint="nothing was installed; tell the registry's maintainers",
            )
        return data


def check_digest(digest: object, what: str) -> str:
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise IntegrityError(f"{what}: not a sha256 digest: {str(digest)[:80]!r}")
    return digest
