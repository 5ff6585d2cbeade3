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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from .. import __version__, query
from ..config import DEFAULT_CONTEXT_BUDGET
from ..errors import OntoskillsError, UsageError
from ..manifest import tier_rank
from ..query import QUERY_MAX_CHARS
from ..search import MAX_TOP_K
from . import answers, prompts, skills_ext
from .notices import Notices

if TYPE_CHECKING:
    from ..catalog.live import LiveCatalog

log = logging.getLogger("ontoskills.server")
T = TypeVar("T")

TOOL_NAME = "ontoskill"
SCHEMA_URI = "ontology://schema"
RESOURCES_PAGE = 200
SCHEMA_RESOURCE = types.Resource(
    uri=SCHEMA_URI,
    name="ontology-schema",
    title="OntoSkills ontology schema",
    description="How to read a skill with the tool (search, overview, parts) and the classes "
    "and properties the installed skills use (compact JSON).",
    mime_type="application/json",
)

TOOL_DESCRIPTION = (
    "Find and load OntoSkills: expert, structured skills (procedures, rules, pitfalls, code "
    "examples, scripts) installed on this machine. Call it BEFORE starting a task that a "
    "specialised skill could cover (documents, PDFs, spreadsheets, testing, debugging, "
    "deployment, design, data, security, ...).\n"
    "- `q` in plain words (e.g. 'fill a PDF form', 'write a failing test first') returns the "
    "best matching skills ranked by relevance and trust, each with its id, description and the "
    "intents that matched.\n"
    "- `q` set to a skill id from those results (e.g. 'acme/docs/pdf' or just 'pdf') returns "
    "that skill sized for one answer: the whole skill when it is small, else an overview "
    "(description, requirements, the most severe knowledge rules, the workflow outline, the "
    "on-disk path of its scripts and assets) and an index of its parts with their sizes.\n"
    "- `q` set to '<skill id>#<part id>' (e.g. 'acme/docs/pdf#knowledge', "
    "'acme/docs/pdf#workflow-fill-form') returns that part; a long part comes in pages: "
    "'acme/docs/pdf#knowledge/2'. Every answer names the next call.\n"
    "Typical use: search once, call again with the best id, then ask only for the parts the "
    "task needs."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": {
            "type": "string",
            "minLength": 1,
            "maxLength": QUERY_MAX_CHARS,
            "description": "What you need, in natural language; or a skill id "
            "(author/pkg/skill or skill) for that skill's overview; or '<skill id>#<part id>' "
            "(page N: '<skill id>#<part id>/N') for one part of it.",
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_TOP_K,
            "default": 5,
            "description": f"How many search results to return (1-{MAX_TOP_K}).",
        },
    },
    "required": ["q"],
    "additionalProperties": False,
}


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

    def _loaded(self, service: Service) -> None:
        with self._count:
            self.generation += 1
            self.served = len(service.skills())

    def problems(self) -> list[str]:
        return list(self._service.problems) if self._service is not None else []

    async def _load(self, *, first: bool) -> None:
        try:
            self._service = await anyio.to_thread.run_sync(self._factory)
            self._loaded(self._service)
            for problem in self._service.problems:
                log.warning("not served (failed verification): %s", problem)
            log.info("serving %d installed skills", len(self._service.skills()))
        except OntoskillsError as exc:
            if first or exc.message != getattr(self._error, "message", None):
                log.error("cannot load the installed skills: %s", exc.message)
            self._error = exc
        except Exception as exc:  # keep serving; every call will report it
            log.exception("cannot load the installed skills")
            self._error = OntoskillsError(f"cannot load the installed skills: {exc}")

    async def build(self) -> None:
        try:
            await self._load(first=True)
        finally:
            self._ready.set()

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
                self._loaded(service)
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


def build_server(holder: ServiceHolder, options: ServeOptions) -> Server[Any]:
    """The SDK server with our handlers; `holder` supplies the service."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=TOOL_NAME,
                    title="OntoSkills: find a skill, read its overview and parts",
                    description=TOOL_DESCRIPTION,
                    input_schema=INPUT_SCHEMA,
                    annotations=types.ToolAnnotations(
                        read_only_hint=True,
                        destructive_hint=False,
                        idempotent_hint=True,
                        open_world_hint=False,
                    ),
                )
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
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
            return await holder.call(run_tool, q, top_k, options)
        except OntoskillsError as exc:
            return _error_result(exc.message, exc.hint)
        except Exception:
            log.exception("ontoskill(%r) failed", q[:200])
            return _error_result("internal error while answering; see the server log")
        finally:
            await notices.flush(ctx, holder)

    skills = skills_ext.Skills(options.min_trust)
    notices = Notices()

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        cursor = params.cursor if params else None
        result: types.ListPromptsResult = await _call_or_error(
            holder, prompts.list_prompts, options, cursor
        )
        return result

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            result: types.GetPromptResult = await _call_or_error(
                holder, prompts.get_prompt, options, params.name, params.arguments
            )
            return result
        finally:
            await notices.flush(ctx, holder)

    async def complete(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        result: types.CompleteResult = await _call_or_error(
            holder, prompts.complete, skills, options.min_trust, params
        )
        return result

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # The schema, then every served skill's SKILL.md (a host can offer them to pick).
        start = prompts.offset_cursor(params.cursor if params else None)
        listed = [SCHEMA_RESOURCE, *await _call_or_error(holder, skills.skill_resources)]
        page = listed[start : start + RESOURCES_PAGE]
        more = start + RESOURCES_PAGE < len(listed)
        return types.ListResourcesResult(
            resources=page, next_cursor=str(start + RESOURCES_PAGE) if more else None
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[skills_ext.TEMPLATE, skills_ext.FILE_TEMPLATE]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == SCHEMA_URI:
            schema = await _call_or_error(holder, lambda service: service.schema())
            text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
            contents = types.TextResourceContents(
                uri=SCHEMA_URI, mime_type="application/json", text=text
            )
            return types.ReadResourceResult(contents=[contents])
        if uri.startswith(skills_ext.SCHEME):
            try:
                result: types.ReadResourceResult = await _call_or_error(holder, skills.read, uri)
            finally:
                await notices.flush(ctx, holder)
            return result
        raise skills_ext.not_found(uri)

    server: Server[Any] = Server(
        "ontoskills",
        version=__version__,
        title="OntoSkills",
        instructions=(
            f"Call `{TOOL_NAME}` with a short description of the task to find the right "
            f"installed skill, then call it again with the skill id for its overview, then "
            f"with '<skill id>#<part id>' for the parts you need. `{SCHEMA_URI}` describes "
            f"the flow and the ontology."
        ),
        cache_hints={
            "tools/list": CacheHint(ttl_ms=3_600_000, scope="public"),
            # Skills are installed and removed live: the SKILL.md list is only briefly fresh.
            "resources/list": CacheHint(ttl_ms=5_000, scope="public"),
            "resources/templates/list": CacheHint(ttl_ms=3_600_000, scope="public"),
            "prompts/list": CacheHint(ttl_ms=5_000, scope="public"),
            # Installs are picked up live, so reads are only briefly fresh.
            "resources/read": CacheHint(ttl_ms=5_000, scope="public"),
        },
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # logging/setLevel through add_request_handler: the constructor's on_set_logging_level
    # warns that 2026-07-28 removed it; handshake-era clients still use it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, notices.set_level)
    skills_ext.install(server, lambda fn, *args: _call_or_error(holder, fn, *args), skills)
    return server


async def _call_or_error(holder: ServiceHolder, fn: Callable[..., T], *args: Any) -> T:
    """`holder.call`, with a domain failure turned into a protocol error."""
    try:
        return await holder.call(fn, *args)
    except OntoskillsError as exc:
        message = exc.message if not exc.hint else f"{exc.message} ({exc.hint})"
        raise MCPError(code=types.INTERNAL_ERROR, message=message) from None
