"""The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) over `skillfs.py`:
`skills/list`, `skills/get`, `resources/read` of every `skill://` file, and
`resources/directory/read` (declared: `directoryRead: true`).

The SDK has no built-in support, but the low-level server takes extra request methods
(`add_request_handler`) and advertises extension capabilities (`Server.extensions`), which
is all the extension needs. Every entry lists all of its skill's files with `sha256:`
digests and sizes (installed files: the lock's; generated ones: of the bytes we serve), so a
host can verify every byte it reads; nothing is `"dynamic"`. Shapes follow
specification/stable/skills.mdx of modelcontextprotocol/ext-skills.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from ..asciinum import uint
from ..catalog.skilldir import SKILL_MD
from ..search.answer import enable_command
from .mime import DIRECTORY, is_text
from .skillfile import SkillFile
from .skillfs import SCHEME, Served, SkillFS, generated_frontmatter

if TYPE_CHECKING:
    from .app import Service

IDENTIFIER = "io.modelcontextprotocol/skills"
SETTINGS: dict[str, Any] = {"directoryRead": True}
PAGE_SIZE = 100  # skills per skills/list page (an entry lists every file of its skill)
DIR_PAGE = 200  # children per resources/directory/read page
TTL_MS = 5_000  # live reload: listings go stale as soon as something is installed
CACHE = {"ttlMs": TTL_MS, "cacheScope": "public"}

TEMPLATE = types.ResourceTemplate(
    uri_template="skill://{author}/{package}/{skill}/SKILL.md",
    name="ontoskill",
    title="An installed skill's SKILL.md",
    description="An installed skill as an Agent Skills SKILL.md (generated from its Turtle, "
    "or the authors' own); its other files sit next to it (skills/get lists them).",
    mime_type="text/markdown",
)
FILE_TEMPLATE = types.ResourceTemplate(
    uri_template="skill://{author}/{package}/{skill}/{+path}",
    name="ontoskill-file",
    title="A file of an installed skill",
    description="Any file of an installed skill, by its path from the skill's root.",
)

# `call(fn, *args)` runs `fn(service, *args)` in a worker thread on the refreshed service.
Call = Callable[..., Awaitable[Any]]


class GetSkillParams(types.RequestParams):
    uri: str


class DirectoryParams(types.RequestParams):
    uri: str
    cursor: str | None = None


def invalid(message: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message)


ECHO_URI = 1024  # characters of an unknown URI an error repeats


def shown(uri: str) -> str:
    """A URI as an error repeats it. No URI we list is anywhere near ECHO_URI long: a longer
    one is cut there, so a 1 MB URI does not come back (twice) in the answer."""
    return uri if len(uri) <= ECHO_URI else uri[:ECHO_URI] + "..."


def not_found(uri: str) -> MCPError:
    """-32602 naming the URI in `data.uri` too (SEP-2164)."""
    uri = shown(uri)
    return MCPError(
        code=types.INVALID_PARAMS, message=f"Resource not found: {uri}", data={"uri": uri}
    )


def _disabled(fs: SkillFS, uri: str) -> MCPError | None:
    """Not found, because the skill the URI names is installed but disabled: say so and
    how to enable it, as the `ontoskill` tool does (still -32602, `data.uri` too)."""
    if not uri.startswith(SCHEME):
        return None
    key = "/".join(uri[len(SCHEME) :].split("/", 3)[:3])
    view = fs.names().view
    if not any(r.key == key and not r.enabled for r in view.data.records):
        return None
    enable = enable_command([key])
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"Resource not found: {shown(uri)}: skill {key} is installed but disabled "
        f"(enable it with `{enable}`)",
        data={"uri": shown(uri), "disabled": key, "enable": enable},
    )


class Skills:
    """One `SkillFS` per service (built on first use), and the extension's answers."""

    def __init__(self, min_trust: str | None) -> None:
        self.min_trust = min_trust
        self._lock = threading.Lock()
        self._fs: SkillFS | None = None

    def fs(self, service: Service) -> SkillFS:
        with self._lock:
            if self._fs is None or self._fs.service is not service:
                self._fs = SkillFS(service, self.min_trust)
            return self._fs

    # ------------------------------------------------------------- skills/*
    def page(self, service: Service, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        fs = self.fs(service)
        keys = fs.served_keys()
        roots = fs.names().roots
        start = 0
        if cursor:  # keys are in URI order: a page costs its own skills, not the catalog
            start = bisect.bisect_right(keys, _decode_cursor(cursor), key=lambda k: roots[k])
        entries: list[dict[str, Any]] = []
        end = start
        while end < len(keys) and len(entries) < PAGE_SIZE:
            served = fs.served(keys[end])
            end += 1
            if served.within_limits():
                entries.append(served.entry())
        more = start < end < len(keys)
        return entries, (_encode_cursor(roots[keys[end - 1]]) if more else None)

    def get(self, service: Service, uri: str) -> dict[str, Any]:
        fs = self.fs(service)
        found = fs.locate(uri)
        if found is None or found[1] != SKILL_MD:
            raise invalid(f"No skill is served at {shown(uri)}")
        served = fs.served(found[0])
        if not served.within_limits():
            raise invalid(f"{shown(uri)} is over the extension's per-skill limits; not served")
        return served.entry()

    # ------------------------------------------------------------- resources
    def read(self, service: Service, uri: str) -> types.ReadResourceResult:
        fs = self.fs(service)
        found = fs.locate(uri)
        served = fs.served(found[0]) if found is not None else None
        f = served.file(found[1]) if served is not None and found is not None else None
        if served is None or f is None:
            if served is not None and found is not None and _is_dir(served, found[1]):
                raise invalid(f"{shown(uri)} is a directory; list it with resources/directory/read")
            raise _disabled(fs, uri) or not_found(uri)
        data = fs.read(served, f)
        return types.ReadResourceResult(contents=[_contents(served.file_uri(f.path), f, data)])

    def skill_resources(self, service: Service) -> list[types.Resource]:
        """The SKILL.md of every served skill, for resources/list (names, no digests)."""
        fs = self.fs(service)
        names = fs.names()
        out = []
        for key in fs.served_keys():
            rec = names.records[key]
            name = names.roots[key].rsplit("/", 1)[1]
            if f"{SKILL_MD}" in {a.rsplit("/", 1)[-1] for a in rec.assets}:
                front = fs.served(key).frontmatter  # the authors' file may be served
            else:
                front = generated_frontmatter(rec, name)
            out.append(
                types.Resource(
                    uri=f"{names.roots[key]}/{SKILL_MD}",
                    name=str(front["name"]),
                    title=rec.key,
                    description=str(front["description"]),
                    mime_type="text/markdown",
                )
            )
        return out

    def directory(
        self, service: Service, uri: str, cursor: str | None
    ) -> tuple[list[types.Resource], str | None]:
        children = self._children(self.fs(service), uri.rstrip("/") if uri != SCHEME else uri)
        start = uint(cursor) if cursor else 0  # the offset we sent: ASCII digits only
        if start is None:
            raise invalid("Invalid cursor")
        page = children[start : start + DIR_PAGE]
        more = start + DIR_PAGE < len(children)
        return page, (str(start + DIR_PAGE) if more else None)

    def _children(self, fs: SkillFS, uri: str) -> list[types.Resource]:
        if not uri.startswith(SCHEME) or uri.endswith("/"):
            raise not_found(uri)
        found = fs.locate(uri)
        if found is not None:
            served = fs.served(found[0])
            if not _is_dir(served, found[1]):
                if served.file(found[1]) is not None:
                    raise invalid(f"{shown(uri)} is not a directory resource")
                raise not_found(uri)
            return _dir_listing(served, found[1])
        # An organizational prefix: skill://author or skill://author/pkg.
        prefix = uri[len(SCHEME) :]
        depth = prefix.count("/") + 1
        names = fs.names()
        below: dict[str, None] = {}
        for key in fs.served_keys():
            root = names.roots[key][len(SCHEME) :].split("/")
            if depth <= 2 and "/".join(root[:depth]) == prefix:
                below.setdefault(SCHEME + "/".join(root[: depth + 1]))
        if not below:
            raise not_found(uri)
        return [
            types.Resource(uri=child, name=child.rsplit("/", 1)[1], mime_type=DIRECTORY)
            for child in sorted(below)
        ]


def _is_dir(served: Served, path: str) -> bool:
    return path == "" or any(f.path.startswith(path + "/") for f in served.files)


def _dir_listing(served: Served, path: str) -> list[types.Resource]:
    base = f"{path}/" if path else ""
    files: dict[str, types.Resource] = {}
    for f in served.files:
        if not f.path.startswith(base):
            continue
        head, sep, _ = f.path[len(base) :].partition("/")
        child = base + head
        if sep:
            files.setdefault(
                child,
                types.Resource(uri=served.file_uri(child), name=head, mime_type=DIRECTORY),
            )
        else:
            files[child] = _resource(served, f)
    return [files[k] for k in sorted(files)]


def _resource(served: Served, f: SkillFile) -> types.Resource:
    if f.path == SKILL_MD:
        return types.Resource(
            uri=served.uri,
            name=served.name,
            description=str(served.frontmatter["description"]),
            mime_type=f.mime,
            size=f.size,
        )
    return types.Resource(
        uri=served.file_uri(f.path), name=f.path.rsplit("/", 1)[-1], mime_type=f.mime, size=f.size
    )


def _contents(
    uri: str, f: SkillFile, data: bytes
) -> types.TextResourceContents | types.BlobResourceContents:
    if is_text(f.mime):
        try:
            return types.TextResourceContents(uri=uri, mime_type=f.mime, text=data.decode("utf-8"))
        except UnicodeDecodeError:
            pass  # not UTF-8: the exact bytes go as a blob
    blob = base64.b64encode(data).decode("ascii")
    return types.BlobResourceContents(uri=uri, mime_type=f.mime, blob=blob)


def _encode_cursor(root: str) -> str:
    return base64.urlsafe_b64encode(root.encode()).decode("ascii")


def _decode_cursor(cursor: str) -> str:
    try:
        root = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        raise invalid("Invalid cursor") from None
    if not root.startswith(SCHEME):
        raise invalid("Invalid cursor")
    return root


def install(server: Server[Any], call: Call, skills: Skills) -> None:
    """Register `skills/list`, `skills/get`, `resources/directory/read`; declare the extension."""

    async def list_skills(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        entries, cursor = await call(skills.page, params.cursor)
        result: dict[str, Any] = {"resultType": "complete", "skills": entries, **CACHE}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    async def get_skill(ctx: ServerRequestContext[Any], params: GetSkillParams) -> dict[str, Any]:
        entry = await call(skills.get, params.uri)
        return {"resultType": "complete", "skill": entry, **CACHE}

    async def read_directory(
        ctx: ServerRequestContext[Any], params: DirectoryParams
    ) -> dict[str, Any]:
        children, cursor = await call(skills.directory, params.uri, params.cursor)
        result: dict[str, Any] = {
            "resultType": "complete",
            "resources": [
                r.model_dump(by_alias=True, mode="json", exclude_none=True) for r in children
            ],
        }
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", GetSkillParams, get_skill)
    server.add_request_handler("resources/directory/read", DirectoryParams, read_directory)
    server.extensions[IDENTIFIER] = dict(SETTINGS)
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
            caps.setdefault("extensions", {}).setdefault(IDENTIFIER, dict(SETTINGS))
    return result
