"""`ontoskills serve --transport http`: the same server over the SDK's Streamable HTTP
transport, one process for many sessions (a devcontainer, a team, a remote agent).

* **Endpoint** `http://HOST:PORT/mcp` (both protocol eras: the SDK routes a request by its
  `MCP-Protocol-Version` header), plus `GET /healthz` (`ok`, for container health checks).
* **DNS rebinding.** The `Host` header must name this server (`127.0.0.1`, `localhost`,
  `[::1]`, the bound address, or an `--allow-host`), and a browser's `Origin` must be one of
  those over http(s) (or an `--allow-origin`): the SDK's transport security, on for every
  bind, answers 421 / 403 otherwise.
* **Token.** Binding anything but loopback needs `ONTOSKILLS_SERVE_TOKEN`: every request
  must carry `Authorization: Bearer <token>` (compared in constant time; 401 otherwise, with
  `WWW-Authenticate: Bearer`). On loopback the token is optional, and enforced when set. The
  token is never logged or echoed.
* **Size.** A POST body over MAX_BODY (1 MiB) is refused with 413 (the SDK's limit, set
  lower than its 4 MiB default); uvicorn bounds the request line and headers, and a
  request's headers must arrive within HEADER_TIMEOUT (slowloris; uvicorn has no such limit).
* **Malformed POSTs** get a one-line JSON-RPC error (-32700 / -32600), not the SDK's
  pydantic report; a refused POST that named no session carries no session id
  (rpcerrors.py).
* **Event streams.** At most `max_streams` GET event streams (`[serve] max_streams`) are open
  at once, each ~57 KB and a connection for as long as its client keeps it; past that a GET
  is 503 with a JSON-RPC error body (docs/SERVER.md).
* **Shutdown.** SIGTERM or SIGINT stops accepting connections, lets in-flight requests finish
  (up to GRACE seconds; past that they are cancelled and the client sees the connection
  close), ends the sessions and exits 0.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import json
import logging
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from ..config import DEFAULT_MAX_STREAMS
from ..errors import UsageError
from .app import ServeOptions, Service, ServiceHolder, build_server
from .rpcerrors import ShortErrors

log = logging.getLogger("ontoskills.server")

DEFAULT_PORT = 8765
PATH = "/mcp"
GRACE = 5  # seconds in-flight requests get after SIGTERM (docker stop waits 10)
KEEP_ALIVE = 75  # seconds an idle connection stays open
HEADER_TIMEOUT = 30  # seconds a request's headers may take to arrive (slowloris)
MIN_TOKEN = 16  # characters: a guessable token on a network is no token
# The SDK refuses a POST body over this with 413 (its default: 4 MiB). Our largest request
# (a `q` of 16,384 characters, each at most a 12-byte surrogate-pair escape, plus the `_meta`
# envelope) is under 256 KB: 1 MiB leaves room and bounds what one request can hold.
MAX_BODY = 1024 * 1024
TOKEN_ENV = "ONTOSKILLS_SERVE_TOKEN"

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


@dataclass(frozen=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    verbose: bool = False
    max_streams: int = DEFAULT_MAX_STREAMS  # `[serve] max_streams`


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_options(options: HttpOptions) -> HttpOptions:
    """Refuse what would expose the skills without a token, or a token that is no secret."""
    token = options.token or None
    if token is not None and (
        len(token) < MIN_TOKEN or not token.isascii() or not token.isprintable() or " " in token
    ):
        raise UsageError(
            f"{TOKEN_ENV} must be at least {MIN_TOKEN} visible ASCII characters (no spaces)",
            hint='make one with `python -c "import secrets; print(secrets.token_urlsafe(32))"`',
        )
    if not is_loopback(options.host) and token is None:
        raise UsageError(
            f"serving on {options.host} would expose your skills to the network without a token",
            hint=f"set {TOKEN_ENV} (clients send `Authorization: Bearer <token>`), or bind "
            "--host 127.0.0.1",
        )
    if not 0 <= options.port <= 65535:
        raise UsageError(f"--port {options.port} is not a TCP port", hint="use 1-65535, or 0")
    return dataclasses.replace(options, token=token)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def security_settings(options: HttpOptions) -> Any:
    """Allowed Host and Origin values for the SDK's DNS-rebinding check."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = ["127.0.0.1", "localhost", "[::1]"]
    if options.host not in ("0.0.0.0", "::"):
        names.append(_bracket(options.host))
    hosts = [f"{n}:*" for n in dict.fromkeys(names)] + list(options.allow_hosts)
    origins = [f"{scheme}://{n}:*" for n in dict.fromkeys(names) for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=origins + list(options.allow_origins),
    )


class Guard:
    """Outer ASGI layer: the bearer token (when set), `/healthz`, and the cap on concurrent
    GET event streams."""

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        hosts: list[str],
        max_streams: int = DEFAULT_MAX_STREAMS,
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.hosts = hosts
        self.max_streams = max_streams
        self.streams = 0  # GET requests on PATH in progress (one event loop: no lock)
        self.full = False  # the cap was reached and said so in the log

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
        if scope.get("path") == "/healthz":
            # The first Host, as the SDK's check (starlette's Headers.get) reads it.
            host = next((v for k, v in raw if k == b"host"), b"").decode("latin-1")
            ok = any(_host_ok(host, allowed) for allowed in self.hosts)
            await _plain(send, 200 if ok else 421, b"ok\n" if ok else b"Invalid Host header\n")
            return
        # Authorization is a singleton field (RFC 9110 11.6.2): with two, a proxy and we could
        # each read another one, so any number but one is refused (dict() kept the last).
        auths = [v for k, v in raw if k == b"authorization"]
        if self.token is not None and not (len(auths) == 1 and self._authorized(auths[0])):
            await _plain(
                send,
                401,
                b"Unauthorized: send Authorization: Bearer <token>\n",
                [(b"www-authenticate", b'Bearer realm="ontoskills"')],
            )
            return
        if scope.get("method") == "GET" and scope.get("path") == PATH:
            await self._stream(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _stream(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """A session's GET event stream stays open as long as its client wants, holding a
        connection and ~57 KB (docs/SERVER.md): past `max_streams` open ones, refuse
        (503, a JSON-RPC error as the SDK answers past its session cap) rather than let
        streams exhaust memory or file descriptors. Sessions keep working without one."""
        if self.streams >= self.max_streams:
            if not self.full:  # once per time the cap is reached, not once per refusal
                log.warning("refused a GET event stream: %d are open", self.streams)
                self.full = True
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32603,
                        "message": f"Too many open event streams (the server allows "
                        f"{self.max_streams}); retry later, or use POST responses only",
                    },
                }
            ).encode()
            headers = [(b"content-type", b"application/json"), (b"retry-after", b"30")]
            await _send(send, 503, body, headers)
            return
        self.streams += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.streams -= 1
            self.full = False

    def _authorized(self, header: bytes) -> bool:
        assert self.token is not None
        scheme, _, value = header.partition(b" ")
        # Compare in constant time, whatever the header holds (a timing oracle on the
        # token's prefix is how such checks leak).
        return hmac.compare_digest(value.strip(), self.token) and scheme.lower() == b"bearer"


def _host_ok(host: str, allowed: str) -> bool:
    if allowed == "*":
        return True
    if allowed.endswith(":*"):
        return host.startswith(allowed[:-1])
    return host == allowed


async def _plain(
    send: Any,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await _send(
        send, status, body, [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])]
    )


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def header_deadline_protocol() -> type:
    """uvicorn's h11 protocol with a deadline on request headers, which it lacks: a client
    that trickles its headers a byte at a time (slowloris), or connects and sends nothing,
    held its connection, a file descriptor, for ever, before any token was checked. The
    headers of every request (the first of a connection, and each one that starts on a
    kept-alive connection) must be complete within HEADER_TIMEOUT, else the connection is
    closed. A request whose headers are in is never cut: bodies are bounded by MAX_BODY,
    answers and event streams take as long as they take."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        header_timeout: float = HEADER_TIMEOUT
        _timer: Any = None
        _armed_cycle: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if self._timer is None and idle:  # the first bytes of a new request
                self._arm()
            super().data_received(data)
            if self._timer is not None and self.cycle is not self._armed_cycle:
                self._disarm()  # its headers are in: a new request cycle started

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._armed_cycle = self.cycle
            self._timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expired(self) -> None:
            self._timer = None
            if self.cycle is self._armed_cycle and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before serving so a busy port is a clear error."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket says TCP, and without it every answer (headers, then body) waited
    # ~40 ms for the client's delayed ACK (Nagle): 44 ms per call instead of ~2.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="choose another --port (0 picks a free one), or stop what uses it",
        ) from None
    sock.set_inheritable(True)
    return sock


def build_app(holder: ServiceHolder, options: ServeOptions, http: HttpOptions) -> Any:
    server = build_server(holder, options)
    settings = security_settings(http)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        max_request_body_size=MAX_BODY,
        transport_security=settings,
        host=http.host,
    )
    return Guard(ShortErrors(app), http.token, list(settings.allowed_hosts), http.max_streams)


async def serve_http(
    factory: Callable[[], Service], options: ServeOptions, http: HttpOptions
) -> None:
    import uvicorn

    http = check_options(http)
    sock = bind(http.host, http.port)
    holder = ServiceHolder(factory)
    app = build_app(holder, options, http)
    config = uvicorn.Config(
        app,
        http=header_deadline_protocol(),
        log_config=None,  # our handler on stderr (runner.configure_logging)
        access_log=http.verbose,
        lifespan="on",
        timeout_graceful_shutdown=GRACE,
        # uvicorn closes an idle keep-alive connection after 5 s by default; a client that
        # reuses it at that moment gets a reset (seen with 100 sessions on a loaded box).
        # Clients hold their pooled connections longer: so do we (nginx's default).
        timeout_keep_alive=KEEP_ALIVE,
        # The SDK streams answers as server-sent events; keep-alive pings are its business.
    )
    userver = uvicorn.Server(config)
    # uvicorn re-raises SIGTERM after its graceful shutdown so the default handler ends the
    # process (exit 143); with this no-op the shutdown it already did is the whole story and
    # `serve` exits 0. SIGINT keeps Python's handler (KeyboardInterrupt, exit 130).
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder.build)
            tg.start_soon(_announce, userver, sock)
            await userver.serve(sockets=[sock])
            tg.cancel_scope.cancel()
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()


async def _announce(userver: Any, sock: socket.socket) -> None:
    while not userver.started:
        await anyio.sleep(0.02)
    host, port = sock.getsockname()[:2]
    # Tests and scripts read this line (port 0 picks a free port).
    log.info("listening on http://%s:%s%s", _bracket(host), port, PATH)
