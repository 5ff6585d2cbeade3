"""A registry served as static files over HTTP(S) (GitHub Pages, S3, any web server).

One httpx.Client (thread-safe) serves the parallel fetcher. Every GET retries on connection
errors, 429 and 5xx with backoff + jitter (Retry-After wins, capped), follows redirects itself
so a token never reaches another host, and streams the body to its sink while counting the
decoded bytes against max_bytes (`_httpbody.py`). Each URL's ETag / Last-Modified and body
digest are kept under cache.http_dir (`_httpcache.py`) so the next run revalidates (304)
instead of downloading, and --offline can use the cache alone.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote, urljoin, urlsplit

import httpx

from .. import __version__
from ..errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    OntoskillsError,
    UsageError,
)
from ..redact import redact_url
from ..registries import RegistryConfig, RegistryKind
from ..safety import check_relpath
from ._auth import Token, auth_hint, check_transport, token_for
from ._httpbody import Retryable, stream_body
from ._httpcache import MetaCache, conditional
from ._retry import (
    RETRY_STATUSES,
    RetryPolicy,
    parse_retry_after,
    status_text,
    transport_text,
)
from .base import BaseSource, RemoteFile, SourceOptions, not_a_registry
from .mirrorlist import MAX_BYTES as MIRROR_MAX_BYTES
from .mirrorlist import MIRROR_STATE, package_files, parse_listing

T = TypeVar("T")
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


class _StaleCache(Exception):
    """A 304 for a cached body that is gone or corrupt: ask again unconditionally."""


class HttpSource(BaseSource):
    kind = RegistryKind.HTTP
    parallel_fetch = True

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        super().__init__(config, options)
        base = config.url.split("#", 1)[0]
        if base.endswith("/index.json"):
            base = base[: -len("index.json")]
        elif not base.endswith("/"):
            base += "/"
        check_transport(base, options.allow_insecure_http, f"registry {config.name}")
        try:
            _ = urlsplit(base).port  # ASCII digits only: ":١٢" or ":99999" raise ValueError
        except ValueError:
            raise UsageError(
                f"registry {config.name}: the URL's port is not a number from 0 to 65535",
                hint="write the port in ASCII digits, e.g. https://host:8443/",
            ) from None
        self.base = base
        self.host = urlsplit(base).hostname or ""
        self.env = options.env or dict(os.environ)
        self.policy = RetryPolicy.from_env(options.retries)
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self._closed = threading.Event()
        self._meta = MetaCache(options.cache)

    # plumbing ---------------------------------------------------------------------
    @property
    def client(self) -> httpx.Client:
        with self._client_lock:
            if self._closed.is_set():  # never reopen behind close(): Ctrl-C is under way
                raise KeyboardInterrupt
            if self._client is None:
                timeout = httpx.Timeout(self.options.timeout, connect=min(self.options.timeout, 15))
                pool = max(4, self.options.parallel + 2)
                self._client = httpx.Client(
                    timeout=timeout,
                    follow_redirects=False,  # we follow them ourselves: tokens stay home
                    limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
                    headers={"User-Agent": f"ontoskills/{__version__}", "Accept-Encoding": "gzip"},
                )
            return self._client

    def url(self, relpath: str) -> str:
        check_relpath(relpath, "registry path")
        return self.base + quote(relpath, safe="/")

    def _offline_miss(self, relpath: str) -> NetworkError:
        return NetworkError(
            f"offline: {relpath} from {self.host} is not in the cache",
            hint="run the same command once without --offline to fill the cache",
        )

    # requests -----------------------------------------------------------------------
    def _remaining(self) -> float:
        deadline = self.options.deadline
        return math.inf if deadline is None else deadline.remaining()

    def _timeout(self) -> httpx.Timeout:
        """The configured timeouts, cut to what is left of the command's deadline."""
        t = max(0.001, min(self.options.timeout, self._remaining()))
        return httpx.Timeout(t, connect=min(t, 15))

    def _deadline_error(self, relpath: str, last: str) -> NetworkError:
        seconds = self.options.deadline.seconds if self.options.deadline else 0
        return NetworkError(
            f"{self.host}: network deadline of {seconds:g} s reached while fetching {relpath} "
            f"(last: {last})",
            hint="the registry is slow or stalled; retry later, or raise "
            "ONTOSKILLS_NETWORK_DEADLINE or `[network] deadline` (seconds)",
        )

    def _report_retry(self, url: str, delay: float, reason: str, attempt: int, total: int) -> None:
        reporter = self.options.reporter
        if reporter is not None:
            reporter.warn(
                f"retrying {redact_url(url)} in {delay:.1f} s "
                f"({reason.removeprefix('HTTP ')}), attempt {attempt}/{total}"
            )

    @contextlib.contextmanager
    def _open(
        self, url: str, headers: dict[str, str]
    ) -> Iterator[tuple[httpx.Response, Token | None]]:
        """GET with redirects followed by hand; each hop gets only the token for its host."""
        for _ in range(MAX_REDIRECTS + 1):
            token = token_for(url, self.base, self.env, self.options.token_origins)
            hop = dict(headers)
            if token is not None:
                hop["Authorization"] = f"Bearer {token.value}"
            request = self.client.build_request("GET", url, headers=hop, timeout=self._timeout())
            resp = self.client.send(request, stream=True)
            if resp.status_code in _REDIRECTS and "Location" in resp.headers:
                target = urljoin(url, resp.headers["Location"])
                resp.close()
                check_transport(target, self.options.allow_insecure_http, "redirect target")
                url = target
                continue
            try:
                yield resp, token
            finally:
                resp.close()
            return
        raise NetworkError(
            f"{self.host}: more than {MAX_REDIRECTS} redirects for {redact_url(url)}"
        )

    def _get(
        self,
        relpath: str,
        headers: dict[str, str],
        consume: Callable[[httpx.Response], T],
        *,
        retries: int | None = None,
    ) -> T:
        url = self.url(relpath)
        last = "no response"
        retries = self.policy.retries if retries is None else retries
        for attempt in range(retries + 1):
            if self._closed.is_set():
                raise KeyboardInterrupt  # the session is shutting down (Ctrl-C)
            if self._remaining() <= 0:
                raise self._deadline_error(relpath, last)
            retry_after = None
            try:
                with self._open(url, headers) as (resp, token):
                    status = resp.status_code
                    if status == 200 and relpath.endswith(".json") and _is_html(resp):
                        raise self._html_page(relpath)
                    if status == 200 or (status == 304 and headers):
                        return consume(resp)
                    if status in (401, 403):
                        raise AuthError(
                            f"{self.host} refused access to {relpath} (HTTP {status})",
                            hint=auth_hint(url, token, self.env, self.options.token_origins),
                        )
                    if status in (404, 410):
                        raise NotFoundError(
                            f"{relpath} not found in registry {self.config.name} "
                            f"({redact_url(url)}, HTTP {status})",
                            hint="check the registry URL and that the package is published",
                        )
                    if status in RETRY_STATUSES or status >= 500:
                        raise Retryable(
                            status_text(status),
                            parse_retry_after(resp.headers.get("Retry-After")),
                        )
                    raise NetworkError(
                        f"{self.host}: unexpected HTTP {status} for {redact_url(url)}",
                        hint="check the registry URL",
                    )
            except Retryable as exc:
                last, retry_after = exc.reason, exc.retry_after
            except _StaleCache:
                headers = {}
                last = "stale cache"
                continue
            except httpx.TransportError as exc:
                last = transport_text(exc)
            if attempt < retries:
                delay = self.policy.delay(attempt, retry_after)
                if delay >= self._remaining():  # the wait alone would outlive the deadline
                    raise self._deadline_error(relpath, last)
                self._report_retry(url, delay, last, attempt + 2, retries + 1)
                self._sleep(delay)
        if self._remaining() <= 0:
            raise self._deadline_error(relpath, last)
        attempts = retries + 1
        raise NetworkError(
            f"{self.host}: giving up on {relpath} after {attempts} attempts (last: {last})",
            hint="check your connection and the registry URL, or retry later; "
            "--offline uses only what is cached",
        )

    def _html_page(self, relpath: str) -> OntoskillsError:
        """A web page where a registry file should be: a site, or a host answering every
        path with its home page (a single-page app, a captive portal). Its index.json
        means the URL is not a registry (exit 2); another file is not there (exit 7, and a
        probe's miss). Never a malformed registry (exit 4), nor a signed one's bad root."""
        where = f"{self.config.name} ({redact_url(self.base)})"
        if relpath == "index.json":
            return not_a_registry(self.config, "its index.json is an HTML page (a web site?)")
        return NotFoundError(
            f"registry {where} answers an HTML page for {relpath}: no such file there",
            hint="check the registry URL and that the package is published",
        )

    def _sleep(self, seconds: float) -> None:
        if self._closed.wait(seconds):
            raise KeyboardInterrupt

    def _stream(
        self, resp: httpx.Response, sink: Callable[[bytes], object], max_bytes: int, relpath: str
    ) -> tuple[str, int]:
        what = f"{self.config.name}: {relpath}"
        grace = 2 * self.options.timeout
        return stream_body(
            resp, sink, max_bytes, what=what, host=self.host, grace=grace, check=self._in_flight
        )

    def _in_flight(self) -> None:
        """Between two chunks of a body: stop on Ctrl-C or at the command's deadline."""
        if self._closed.is_set():
            raise KeyboardInterrupt
        if self._remaining() <= 0:  # _get turns this into the deadline error
            raise Retryable("network deadline reached mid-transfer")

    # BaseSource ---------------------------------------------------------------------
    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        return self._read(relpath, max_bytes, retries=None)

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        try:
            return self._read(relpath, max_bytes, retries=0)
        except (NotFoundError, AuthError, NetworkError):
            return None  # S3 answers 403 for a missing key; some hosts 500 on unknown paths

    def _read(self, relpath: str, max_bytes: int, *, retries: int | None) -> bytes:
        url = self.url(relpath)
        cached = self._meta.cached(url)
        if self.options.offline:
            data = self._meta.read(cached)
            if data is None:
                raise self._offline_miss(relpath)
            return data

        def consume(resp: httpx.Response) -> bytes:
            if resp.status_code == 304:
                data = self._meta.read(cached)
                if data is None:
                    raise _StaleCache
                return data
            buf = bytearray()
            sha, size = self._stream(resp, buf.extend, max_bytes, relpath)
            data = bytes(buf)
            self.options.cache.store_blob(sha, data)
            self._meta.save(url, resp, sha, size)
            return data

        return self._get(relpath, conditional(cached), consume, retries=retries)

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        url = self.url(relpath)
        cached = self._meta.cached(url)
        if self.options.offline:
            if cached is None or cached.size > max_bytes:
                raise self._offline_miss(relpath)
            result = self._meta.copy(cached, dest)
            if result is None:
                raise self._offline_miss(relpath)
            return result

        def consume(resp: httpx.Response) -> tuple[str, int]:
            if resp.status_code == 304:
                result = self._meta.copy(cached, dest)
                if result is None or result[1] > max_bytes:
                    raise _StaleCache
                return result
            with open(dest, "wb") as out:  # truncates what a failed attempt left behind
                sha, size = self._stream(resp, out.write, max_bytes, relpath)
            self._meta.save(url, resp, sha, size)
            return sha, size

        return self._get(relpath, conditional(cached), consume)

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        """Static HTTP cannot list folders: the manifest (+ its `files`) is all we know,
        unless the site is a mirror, whose mirror.json lists every file (mirrorlist.py)."""
        listing = self._mirror_listing
        return None if listing is None else package_files(listing, package_root)

    @cached_property
    def _mirror_listing(self) -> dict[str, RemoteFile] | None:
        """mirror.json's listing, read once per source (mirrorlist.parse_listing)."""
        try:  # most sites are no mirror: a 404, an HTML fallback page, offline uncached
            data = self.probe(MIRROR_STATE, max_bytes=MIRROR_MAX_BYTES)
        except OntoskillsError:
            return None
        return None if data is None else parse_listing(data, MIRROR_STATE)

    def close(self) -> None:
        self._closed.set()  # stop in-flight downloads at their next chunk
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _is_html(resp: httpx.Response) -> bool:
    kind = resp.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml")
