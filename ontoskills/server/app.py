"""The MCP server: one tool (`ontoskill`), one resource (`ontology://schema`) and the Skills
extension, over the official SDK's low-level `Server` (both protocol eras: the 2024-11-05 ..
2025-11-25 initialize handshake and the 2026-07-28 per-request envelope; the SDK picks the era
from the client's first request).

We use the low-level server rather than MCPServer because we need what it does not give us
at once: a hand-written input schema with bounds, our own argument checks that answer with a
tool error (`isError`, so the model can correct itself) instead of an exception, and custom
`skills/*` methods. Every handler is defensive: a bad request gets an error reply, never a
dead server.

The search service is built in a worker thread after the transport is up, so the initialize
handshake is answered at once; handlers wait for it. Service calls run in worker threads
(the service is thread-safe) and each request first calls `service.refresh()`, which is a
stat of the lockfile, so installs made while we run are served without a restart.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError

from .. import __version__, query
from ..config import DEFAULT_CONTEXT_BUDGET
from ..errors import OntoskillsError, UsageError
from ..manifest import tier_rank
from ..search import MAX_TOP_K
from . import answers, prompts, skills_ext
from .changes import DEFAULT_WATCH_INTERVAL, ListChanges, Lists
from .declared import (
    CACHE_HINTS,
    INPUT_SCHEMA,
    INSTRUCTIONS,
    RESOURCES_PAGE,
    SCHEMA_RESOURCE,
    SCHEMA_URI,
    TOOL,
    TOOL_DESCRIPTION,
    TOOL_NAME,
)
from .notices import Notices

if TYPE_CHECKING:
    from ..catalog.live import LiveCatalog

log = logging.getLogger("ontoskills.server")
T = TypeVar("T")
__all__ = ["INPUT_SCHEMA", "TOOL_DESCRIPTION", "TOOL_NAME", "build_server", "check_arguments"]


class Service(Protocol):
    """What the server needs from `ontoskills.search.service.SkillService`."""

    def refresh(self) -> bool: ...
    def resolve(self, q: str) -> str | None: ...
    def search(
        self, q: str, *, top_k: int = 5, mode: str = "auto", min_trust: str | None = None
    ) -> Any: ...
    def context(self, key: str) -> Any: ...
    def resolve_context(self, q: str) -> tuple[str, str | None] | None: ...
    def skill_answer(self, key: str, part: str | None = None, *, budget: int = ...) -> Any: ...
    def disclosure(self, key: str, budget: int = ...) -> Any: ...
    def skills(self, *, min_trust: str | None = None) -> list[Any]: ...
    def schema(self) -> dict[str, Any]: ...
    @property
    def problems(self) -> list[str]: ...
    @property
    def catalog(self) -> LiveCatalog[Any]: ...


@dataclass(frozen=True)
class ServeOptions:
    min_trust: str | None = None
    mode: str = "auto"
    context_budget: int = DEFAULT_CONTEXT_BUDGET  # chars of one skill answer (text + JSON)
    prompts: bool = False  # one prompt per served skill (`serve --prompts`)
    watch_interval: float = DEFAULT_WATCH_INTERVAL  # seconds between list-change polls; 0: off


class ToolInputError(Exception):
    """Bad `ontoskill` arguments: reported as a tool error the model can act on."""


class ServiceHolder:
    """The service, built once in a worker thread; handlers await it."""

    def __init__(self, factory: Callable[[], Service]) -> None:
        self._factory = factory
        self._ready = anyio.Event()
        self._retry = anyio.Lock()
        self._service: Service | None = None
        self._error: OntoskillsError | None = None
        self._count = threading.Lock()
        self.generation = 0  # +1 per catalog load: clients are told about reloads (notices.py)
        self.served = 0  # skills served by the last load
        self.watch: Callable[[], Awaitable[None]] | None = None  # changes.ListChanges.run

    def loaded(self, service: Service) -> None:
        with self._count:
            self.generation += 1
            self.served = len(service.skills())

    def problems(self) -> list[str]:
        return list(self._service.problems) if self._service is not None else []

    async def _load(self, *, first: bool) -> None:
        try:
            self._service = await anyio.to_thread.run_sync(self._factory)
            self.loaded(self._service)
            from ..catalog.verify import changed_warning  # the words link uses too

            for problem in self._service.problems:
                log.warning("failed verification: %s", changed_warning(problem))
            log.info("serving %d installed skills", len(self._service.skills()))
        except OntoskillsError as exc:
            if first or exc.message != getattr(self._error, "message", None):
                log.error("cannot load the installed skills: %s", exc.message)
            self._error = exc
        except Exception as exc:  # keep serving; every call will report it
            log.exception("cannot load the installed skills")
            self._error = OntoskillsError(f"cannot load the installed skills: {exc}")

    async def build(self) -> None:
        """Load, then watch for list changes (changes.py) until the transport cancels."""
        try:
            await self._load(first=True)
        finally:
            self._ready.set()
        if self.watch is not None:
            await self.watch()

    async def get(self) -> Service:
        """The ready service (not refreshed: `call` does that).

        After a failed start (say a malformed lock) every request tries again, so fixing
        the cause needs no restart.
        """
        await self._ready.wait()
        if self._service is None:
            async with self._retry:
                if self._service is None:
                    await self._load(first=False)
        if self._service is None:
            assert self._error is not None
            raise self._error
        return self._service

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(service, *args)` in a worker thread, after a refresh against the lockfile.

        One thread hop per request: refresh is a stat when nothing changed, but a reload
        after an install parses the new lock and must not stall the event loop.
        """
        service = await self.get()

        def work() -> T:
            if service.refresh():
                self.loaded(service)
            return fn(service, *args)

        return await anyio.to_thread.run_sync(work)


def check_arguments(arguments: dict[str, Any] | None) -> tuple[str, int]:
    """(q, top_k) from raw tool arguments, or ToolInputError saying what to fix."""
    args = arguments or {}
    unknown = sorted(set(args) - {"q", "top_k"})
    if unknown:
        raise ToolInputError(f"unknown argument(s): {', '.join(unknown)}; use q and top_k")
    q = args.get("q")
    if not isinstance(q, str):
        raise ToolInputError("`q` is required and must be a string")
    try:
        q = query.clean(q)  # the grammar's own checks: the CLI refuses the same queries
    except UsageError as e:
        raise ToolInputError(f"`q`: {e}; {e.hint}") from None
    top_k = args.get("top_k", 5)
    if isinstance(top_k, float) and top_k.is_integer():
        top_k = int(top_k)  # JSON has one number type; 5.0 is a fine 5
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise ToolInputError(f"`top_k` must be an integer from 1 to {MAX_TOP_K}")
    if not 1 <= top_k <= MAX_TOP_K:
        raise ToolInputError(f"`top_k` is {top_k}; it must be from 1 to {MAX_TOP_K}")
    return q, top_k


def _error_result(message: str, hint: str | None = None) -> types.CallToolResult:
    text = message if not hint else f"{message}\nhint: {hint}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _trusted(service: Service, key: str, min_trust: str | None) -> bool:
    if min_trust is None:
        return True
    floor = tier_rank(min_trust)
    return any(s.key == key and tier_rank(s.trust_tier) >= floor for s in service.skills())


def skill_result(service: Service, q: str, options: ServeOptions) -> types.CallToolResult | None:
    """When `q` names a skill (or `skill#part`, `skill#part/2`): its overview or that part,
    within the context budget. None when `q` is a search."""
    target = service.resolve_context(q)
    if target is None or not _trusted(service, target[0], options.min_trust):
        return None
    answer = service.skill_answer(target[0], target[1], budget=options.context_budget)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=answer.text)],
        structured_content=answer.structured,
    )


def run_tool(service: Service, q: str, top_k: int, options: ServeOptions) -> types.CallToolResult:
    """The `ontoskill` tool body (sync: runs in a worker thread)."""
    found = skill_result(service, q, options)
    if found is not None:
        return found
    response = service.search(q, top_k=top_k, mode=options.mode, min_trust=options.min_trust)
    return answers.search_result(response)


class _Handlers:
    """The server's request handlers over one service holder and its options."""

    def __init__(self, holder: ServiceHolder, options: ServeOptions) -> None:
        self.holder = holder
        self.options = options
        self.skills = skills_ext.Skills(options.min_trust)
        self.notices = Notices()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await _call_or_error(self.holder, fn, *args)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool: {params.name!r} (this server has {TOOL_NAME!r})",
            )
        try:
            q, top_k = check_arguments(params.arguments)
        except ToolInputError as exc:
            return _error_result(str(exc))
        try:
            return await self.holder.call(run_tool, q, top_k, self.options)
        except OntoskillsError as exc:
            return _error_result(exc.message, exc.hint)
        except Exception:
            log.exception("ontoskill(%r) failed", q[:200])
            return _error_result("internal error while answering; see the server log")
        finally:
            await self.notices.flush(ctx, self.holder)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        cursor = params.cursor if params else None
        result: types.ListPromptsResult = await self.call(
            prompts.list_prompts, self.options, cursor
        )
        return result

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            result: types.GetPromptResult = await self.call(
                prompts.get_prompt, self.options, params.name, params.arguments
            )
            return result
        finally:
            await self.notices.flush(ctx, self.holder)

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        result: types.CompleteResult = await self.call(
            prompts.complete, self.skills, self.options.min_trust, params
        )
        return result

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # The schema, then every served skill's SKILL.md (a host can offer them to pick).
        start = prompts.offset_cursor(params.cursor if params else None)
        listed = [SCHEMA_RESOURCE, *await self.call(self.skills.skill_resources)]
        page = listed[start : start + RESOURCES_PAGE]
        more = start + RESOURCES_PAGE < len(listed)
        return types.ListResourcesResult(
            resources=page, next_cursor=str(start + RESOURCES_PAGE) if more else None
        )

    async def list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[skills_ext.TEMPLATE, skills_ext.FILE_TEMPLATE]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == SCHEMA_URI:
            schema = await self.call(lambda service: service.schema())
            text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
            contents = types.TextResourceContents(
                uri=SCHEMA_URI, mime_type="application/json", text=text
            )
            return types.ReadResourceResult(contents=[contents])
        if uri.startswith(skills_ext.SCHEME):
            try:
                result: types.ReadResourceResult = await self.call(self.skills.read, uri)
            finally:
                await self.notices.flush(ctx, self.holder)
            return result
        raise skills_ext.not_found(uri)


# A live install changes the resources and (with --prompts) the prompts; never the one tool.
# early.INITIALIZE_CAPABILITIES says the same (tests/server/test_early_initialize.py).
NOTIFICATIONS = NotificationOptions(prompts_changed=True, resources_changed=True)


class _Server(Server[Any]):
    """The SDK's server, declaring `listChanged` wherever it builds its initialize answer
    (stdio passes options; the Streamable HTTP manager uses this default)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NOTIFICATIONS, experimental_capabilities, extensions
        )


def _lists(handlers: _Handlers, service: Service) -> Lists:
    """What resources/list and prompts/list show now (changes.py compares two of these)."""
    resources = handlers.skills.skill_resources(service)
    listed = (
        prompts.skill_prompts(service, handlers.options.min_trust)
        if handlers.options.prompts
        else []  # the one `ontoskill` prompt: never changes
    )
    return Lists(
        resources=frozenset((str(r.uri), r.name, r.description or "") for r in resources),
        prompts=frozenset((p.name, p.key, p.description) for p in listed),
    )


def build_server(holder: ServiceHolder, options: ServeOptions) -> Server[Any]:
    """The SDK server with our handlers; `holder` supplies the service."""
    h = _Handlers(holder, options)
    server: Server[Any] = _Server(
        "ontoskills",
        version=__version__,
        title="OntoSkills",
        instructions=INSTRUCTIONS,
        cache_hints=CACHE_HINTS,
        on_list_tools=h.list_tools,
        on_call_tool=h.call_tool,
        on_list_resources=h.list_resources,
        on_list_resource_templates=h.list_templates,
        on_read_resource=h.read_resource,
        on_list_prompts=h.list_prompts,
        on_get_prompt=h.get_prompt,
        on_completion=h.complete,
    )
    # logging/setLevel through add_request_handler: the constructor's on_set_logging_level
    # warns that 2026-07-28 removed it; handshake-era clients still use it.
    server.add_request_handler(
        "logging/setLevel", types.SetLevelRequestParams, h.notices.set_level
    )
    skills_ext.install(server, h.call, h.skills)
    for method in TASKS_METHODS:
        server.add_request_handler(method, types.RequestParams, _no_tasks)
    changes = ListChanges(holder, lambda service: _lists(h, service), options.watch_interval)
    server.middleware.append(changes.track)
    holder.watch = changes.run
    return server


# The tasks extension's methods (SEP-2663). We create no tasks and do not declare it; a client
# that did not declare it either gets -32021 naming it (the conformance suite's
# `sep-2663-tasks-methods-non-declaring`), one that did gets -32601.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASKS_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


async def _no_tasks(ctx: ServerRequestContext[Any], params: types.RequestParams) -> Any:
    from mcp.server.mcpserver.server import require_client_extension

    require_client_extension(ctx, TASKS_EXTENSION)  # -32021 when the client did not declare it
    raise MCPError(code=types.METHOD_NOT_FOUND, message="this server creates no tasks")


async def _call_or_error(holder: ServiceHolder, fn: Callable[..., T], *args: Any) -> T:
    """`holder.call`, with a domain failure turned into a protocol error."""
    try:
        return await holder.call(fn, *args)
    except OntoskillsError as exc:
        message = exc.message if not exc.hint else f"{exc.message} ({exc.hint})"
        raise MCPError(code=types.INTERNAL_ERROR, message=message) from None
