"""`listChanged`: telling connected clients that a live install, update, removal, enable or
disable changed the resources (every served skill's `skill://.../SKILL.md`) or the prompts
(`serve --prompts`: one per served skill).

Detection is a poll in the server loop, every `ServeOptions.watch_interval` seconds
(`[serve] watch_interval`, default 2; 0 turns it off): the same `refresh()` every request makes
(a stat of the lockfile; a reload only when it changed), then, when the catalog generation moved
(this poll's reload or a request's), the two lists are rebuilt and compared with what was last
announced. A poll and not only the refresh a request already does, because the client that most
needs the news is an idle one: it sends no request until it hears from us. One stat every few
seconds costs nothing; no busy loop.

Who hears it: every handshake-era connection (stdio; a 2025-era Streamable HTTP session, through
its standalone GET stream when it has one open: the SDK drops it otherwise), recorded when its
`notifications/initialized` arrives and forgotten when the connection closes. A 2026-07-28
client gets change notifications only from a `subscriptions/listen` stream, which we do not
serve: stateless requests cannot receive them, and the SDK declares `listChanged: false` to that
era on its own (`Server.get_capabilities`). The tool list never changes (one tool, fixed schema),
so `tools.listChanged` stays false. The Skills extension's listing is these same `skill://`
resources; it defines no notification of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp.server.context import CallNext, ServerRequestContext

if TYPE_CHECKING:
    from .app import Service, ServiceHolder

log = logging.getLogger("ontoskills.server")
DEFAULT_WATCH_INTERVAL = 2.0  # seconds between two stats of the lockfile
INITIALIZED = "notifications/initialized"
NOTIFY_TIMEOUT = 5.0  # seconds one connection may take to accept a notification


@dataclass(frozen=True)
class Lists:
    """What a client lists: resource URIs (with what it shows of each) and prompt names."""

    resources: frozenset[tuple[str, str, str]] = frozenset()
    prompts: frozenset[tuple[str, str, str]] = frozenset()


class ListChanges:
    """The connections to tell, and the poll that tells them."""

    def __init__(
        self, holder: ServiceHolder, lists: Callable[[Service], Lists], interval: float
    ) -> None:
        self._holder = holder
        self._lists = lists
        self.interval = interval
        self._connections: dict[int, Any] = {}  # id(connection) -> connection
        self._seen_generation = 0
        self._seen: Lists | None = None

    @property
    def connections(self) -> int:
        return len(self._connections)

    async def track(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
        """Server middleware: remember a handshake connection once it is initialized."""
        result = await call_next(ctx)
        if ctx.method == INITIALIZED:
            # No public accessor for the connection behind a request's session in mcp 2.3
            # (notices.py reads the same attribute).
            connection = getattr(ctx.session, "_connection", None)
            stack = getattr(connection, "exit_stack", None)
            key = id(connection)
            if connection is not None and stack is not None and key not in self._connections:
                self._connections[key] = connection
                stack.callback(self._connections.pop, key, None)
        return result

    async def run(self) -> None:
        """Poll until cancelled (the transport's task group ends it)."""
        if self.interval <= 0:
            return
        while True:
            try:  # the first pass right after the load: the baseline later ones compare with
                await self.check()
            except Exception:  # a broken lock is reported to requests; the poll goes on
                log.debug("list-change poll failed", exc_info=True)
            await anyio.sleep(self.interval)

    async def check(self) -> tuple[bool, bool]:
        """One poll: (resources changed, prompts changed), the notifications sent."""
        service = await self._holder.get()
        if await anyio.to_thread.run_sync(service.refresh):
            self._holder.loaded(service)
        generation = self._holder.generation
        if generation == self._seen_generation and self._seen is not None:
            return False, False
        now = await anyio.to_thread.run_sync(self._lists, service)
        before, self._seen, self._seen_generation = self._seen, now, generation
        if before is None:
            return False, False  # the first look: nothing announced yet to compare with
        changed = (now.resources != before.resources, now.prompts != before.prompts)
        if any(changed):
            await self._announce(*changed)
        return changed

    async def _announce(self, resources: bool, prompts: bool) -> None:
        methods = [
            name
            for name, flag in (
                ("notifications/resources/list_changed", resources),
                ("notifications/prompts/list_changed", prompts),
            )
            if flag
        ]
        told = self.connections
        log.info("lists changed (%s): telling %d connection(s)", ", ".join(methods), told)
        for connection in list(self._connections.values()):
            # Best effort (the SDK's notify never raises); a client that stopped reading its
            # stream must not hold the others' news back.
            with anyio.move_on_after(NOTIFY_TIMEOUT):
                for method in methods:
                    await connection.notify(method, None)
