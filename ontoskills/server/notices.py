"""The `logging` capability: what the server tells a client about itself, as
`notifications/message`, at the level the client asked for.

Handshake-era clients set a level per connection with `logging/setLevel` (until they do, only
`warning` and above are sent); 2026-07-28 clients opt in per request (`_meta` log level; the
SDK drops what was not asked for). Messages: files that failed verification and are not
served (`warning`, once per connection), and installs, updates or removals picked up while
serving (`info`: the catalog reloaded, how many skills are served now). Logger: `ontoskills`.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning

from ..words import plural

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from .app import ServiceHolder

log = logging.getLogger("ontoskills.server")
LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
DEFAULT_LEVEL = "warning"
LOGGER = "ontoskills"

# The SDK marks server->client logging deprecated as of 2026-07-28 (SEP-2577) and warns on
# every send; we serve both eras on purpose, so that one warning is noise.
warnings.filterwarnings(
    "ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning
)


class _Seen:
    def __init__(self) -> None:
        self.level = DEFAULT_LEVEL
        self.generation = 0
        self.problems: set[str] = set()


class Notices:
    def __init__(self) -> None:
        self._by_session: weakref.WeakKeyDictionary[Any, _Seen] = weakref.WeakKeyDictionary()

    def _state(self, ctx: ServerRequestContext[Any]) -> _Seen:
        # The SDK makes a ServerSession per request; the level and what was said belong to
        # the connection behind it (no public accessor in mcp 2.3: the private one, else
        # the session, which only loses the "once per connection").
        key = getattr(ctx.session, "_connection", ctx.session)
        state = self._by_session.get(key)
        if state is None:
            state = self._by_session[key] = _Seen()
        return state

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._state(ctx).level = params.level
        return types.EmptyResult()

    async def flush(self, ctx: ServerRequestContext[Any], holder: ServiceHolder) -> None:
        """Send what this connection has not been told yet (best effort, never raises)."""
        state = self._state(ctx)
        floor = LEVELS.index(state.level) if state.level in LEVELS else 0
        messages: list[tuple[str, str]] = []
        if state.generation == 0:
            state.generation = holder.generation  # a new connection: nothing changed for it
        elif holder.generation != state.generation:
            messages.append(
                ("info", f"installed skills changed: now serving {plural(holder.served, 'skill')}")
            )
            state.generation = holder.generation
        for problem in holder.problems():
            if problem not in state.problems:
                state.problems.add(problem)
                messages.append(("warning", f"not served: {problem}"))
        for level, text in messages:
            if LEVELS.index(level) < floor:
                continue
            try:
                await ctx.session.send_log_message(level, text, logger=LOGGER)  # type: ignore[arg-type]
            except Exception:  # a closed stream: the client is gone, nothing to tell
                log.debug("could not send a log notification", exc_info=True)
                return
