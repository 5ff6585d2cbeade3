"""A host's side of the MCP Skills extension (SEP-2640), for tests and benchmarks: list every
skill, confirm each entry with skills/get, read every file it lists and verify it as a host
must (byte size, sha256 digest, SKILL.md frontmatter equal to the entry's, URIs inside the
skill, the naming rule). Works with any object that has `send_request(method, params)`
returning the result dict (an SDK client, a raw stdio or HTTP session)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

NAME_RE = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")  # the conformance check
FRONT_RE = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)")

Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class Walk:
    skills: int = 0
    files: int = 0
    bytes: int = 0
    pages: int = 0
    problems: list[str] = field(default_factory=list)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)


def content_bytes(content: dict[str, Any]) -> bytes:
    if "text" in content:
        return str(content["text"]).encode("utf-8")
    return base64.b64decode(content["blob"])


async def list_all(request: Request, walk: Walk) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        result = await request("skills/list", {"cursor": cursor} if cursor else {})
        walk.pages += 1
        assert result.get("resultType", "complete") == "complete"
        entries.extend(result["skills"])
        cursor = result.get("nextCursor")
        if not cursor:
            return entries


async def verify_skill(request: Request, entry: dict[str, Any], walk: Walk) -> None:
    uri = entry["uri"]
    bad = walk.problems.append
    root = uri.removesuffix("/SKILL.md")
    name = root.rsplit("/", 1)[-1]
    if not uri.endswith("/SKILL.md") or entry["frontmatter"].get("name") != name:
        bad(f"{uri}: name {entry['frontmatter'].get('name')!r} is not the last segment")
    if not NAME_RE.match(name):
        bad(f"{uri}: {name!r} breaks the naming rule")
    resources = entry["resources"]
    if not isinstance(resources, list):
        bad(f"{uri}: resources is {resources!r}, not a manifest")
        return
    got = (await request("skills/get", {"uri": uri}))["skill"]
    if got != entry:
        bad(f"{uri}: skills/get differs from the listing")
    uris = [r["uri"] for r in resources]
    if uri not in uris or len(set(uris)) != len(uris):
        bad(f"{uri}: SKILL.md missing from its manifest, or a file listed twice")
    if len(resources) > 512 or sum(r["size"] for r in resources) > 16 * 1024 * 1024:
        bad(f"{uri}: over the per-skill limits")
    for res in resources:
        if res["uri"] != uri and not res["uri"].startswith(root + "/"):
            bad(f"{res['uri']}: outside {root}")
        if not re.fullmatch(r"sha256:[0-9a-f]{64}", res["digest"]):
            bad(f"{res['uri']}: digest {res['digest']!r}")
        read = await request("resources/read", {"uri": res["uri"]})
        (content,) = read["contents"]
        data = content_bytes(content)
        walk.files += 1
        walk.bytes += len(data)
        if content["uri"] != res["uri"]:
            bad(f"{res['uri']}: read back as {content['uri']}")
        if len(data) != res["size"]:
            bad(f"{res['uri']}: {len(data)} bytes, listed {res['size']}")
        if "sha256:" + hashlib.sha256(data).hexdigest() != res["digest"]:
            bad(f"{res['uri']}: digest mismatch")
        if res["uri"] == uri:
            m = FRONT_RE.match(data.decode("utf-8").removeprefix("\ufeff"))
            front = yaml.safe_load(m.group(1)) if m else None
            if front != entry["frontmatter"]:
                bad(f"{uri}: file frontmatter {front!r} != entry {entry['frontmatter']!r}")
    walk.skills += 1
    walk.entries[uri] = entry


async def walk_all(request: Request) -> Walk:
    walk = Walk()
    for entry in await list_all(request, walk):
        await verify_skill(request, entry, walk)
    return walk


def sdk_request(client: Any) -> Request:
    """`request(method, params)` over an SDK `Client` (either era: the client stamps the
    2026-07-28 `_meta` envelope itself), answering the raw result dict."""
    import mcp_types as types
    from pydantic import TypeAdapter

    class _Raw(types.Request[dict[str, Any] | None, str]):
        pass

    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])

    async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raw = _Raw(method=method, params=dict(params))
        result: dict[str, Any] = await client.session.send_request(raw, adapter)
        return result

    return request
