"""The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): `skills/list`,
`skills/get` and `skill://<author>/<pkg>/<skill>/SKILL.md` resources.

The SDK has no built-in support, but the low-level server takes extra request methods
(`add_request_handler`) and advertises extension capabilities (`Server.extensions`), which
is all the extension needs. Our skills are Turtle, not SKILL.md folders, so each skill's
SKILL.md is generated: YAML frontmatter (the same object the entry carries) + the compact
context text. Generated content has no stable digest, so entries say `"resources": "dynamic"`
as the spec requires; the on-disk scripts and assets are named inside the context.

A skill is published only when its id is a valid Agent Skills name (lowercase letters,
digits, single hyphens, <= 64 chars), because the URI's last segment must equal the name.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
import yaml
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from ..errors import NotFoundError
from ..manifest import tier_rank

if TYPE_CHECKING:
    from .app import Service

IDENTIFIER = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
PAGE_SIZE = 200
TTL_MS = 5_000  # live reload: listings go stale as soon as something is installed
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_URI_RE = re.compile(r"^skill://([^/]+/[^/]+/[^/]+)/SKILL\.md$")

TEMPLATE = types.ResourceTemplate(
    uri_template="skill://{author}/{package}/{skill}/SKILL.md",
    name="ontoskill",
    description="An installed skill's full context as a generated SKILL.md",
    mime_type="text/markdown",
)


# `call(fn, *args)` runs `fn(service, *args)` in a worker thread on the refreshed service.
Call = Callable[..., Awaitable[Any]]


class GetSkillParams(types.RequestParams):
    uri: str


def publishable(key: str) -> bool:
    name = key.rsplit("/", 1)[-1]
    return len(name) <= 64 and bool(_NAME_RE.match(name))


def skill_uri(key: str) -> str:
    return f"{SCHEME}{key}/SKILL.md"


def frontmatter(summary: Any) -> dict[str, Any]:
    description = (summary.description or "").strip() or f"OntoSkills skill {summary.key}"
    return {
        "name": summary.key.rsplit("/", 1)[-1],
        "description": description[:1024],
        "metadata": {
            "ontoskills-key": summary.key,
            "package": summary.package,
            "trust-tier": summary.trust_tier,
        },
    }


def entry(summary: Any) -> dict[str, Any]:
    return {
        "uri": skill_uri(summary.key),
        "frontmatter": frontmatter(summary),
        "resources": "dynamic",
    }


def _visible(service: Service, min_trust: str | None) -> list[Any]:
    floor = tier_rank(min_trust) if min_trust else None
    return [
        s
        for s in service.skills()
        if publishable(s.key) and (floor is None or tier_rank(s.trust_tier) >= floor)
    ]


def _find(service: Service, uri: str, min_trust: str | None) -> Any:
    match = _URI_RE.match(uri)
    summary = None
    if match:
        key = match.group(1)
        summary = next((s for s in _visible(service, min_trust) if s.key == key), None)
    if summary is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Not a skill this server serves: {uri}")
    return summary


def skill_md(service: Service, summary: Any) -> str:
    head = yaml.safe_dump(frontmatter(summary), sort_keys=False, allow_unicode=True)
    body = service.context(summary.key).render()
    return f"---\n{head}---\n\n{body.rstrip()}\n"


def read_text(service: Service, uri: str, min_trust: str | None) -> str:
    """The generated SKILL.md behind a `skill://` URI (sync: runs in a worker thread)."""
    summary = _find(service, uri, min_trust)
    try:
        return skill_md(service, summary)
    except NotFoundError:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}") from None


def install(server: Server[Any], call: Call, min_trust: str | None) -> None:
    """Register `skills/list` and `skills/get` and advertise the extension."""

    async def list_skills(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        try:
            start = int(params.cursor) if params.cursor else 0
        except ValueError:
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor") from None
        if start < 0:
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor")
        skills = await call(_visible, min_trust)
        page = skills[start : start + PAGE_SIZE]
        result: dict[str, Any] = {
            "resultType": "complete",
            "skills": [entry(s) for s in page],
            "ttlMs": TTL_MS,
            "cacheScope": "public",
        }
        if start + PAGE_SIZE < len(skills):
            result["nextCursor"] = str(start + PAGE_SIZE)
        return result

    async def get_skill(ctx: ServerRequestContext[Any], params: GetSkillParams) -> dict[str, Any]:
        summary = await call(_find, params.uri, min_trust)
        return {
            "resultType": "complete",
            "skill": entry(summary),
            "ttlMs": TTL_MS,
            "cacheScope": "public",
        }

    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", GetSkillParams, get_skill)
    server.extensions[IDENTIFIER] = {}
    server.middleware.append(_declare_on_handshake)


async def _declare_on_handshake(ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
    """Also declare the extension in a handshake-era `initialize` result.

    The SDK sieves `capabilities.extensions` out of 2025-era results (those schemas predate
    it), yet hosts on handshake connections (the MCP Inspector among them) look for it there
    before calling `skills/*`. Older clients ignore the unknown key.
    """
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        caps = result.get("capabilities")
        if isinstance(caps, dict):
            caps.setdefault("extensions", {}).setdefault(IDENTIFIER, {})
    return result
