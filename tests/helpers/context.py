"""Walk a skill through the `ontoskill` tool as an agent would (overview -> index -> every page
of every part) and check that everything `show --json` has is somewhere in what it read."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_ID_RE = re.compile(r"^\s*- `#([a-z0-9][a-z0-9-]*)`", re.MULTILINE)  # an index line

# q -> (text, structuredContent, is_error), the way a client sees one tool call.
Call = Callable[[str], Awaitable[tuple[str, dict[str, Any], bool]]]


def _texts(doc: dict[str, Any]) -> Iterator[str]:
    yield from doc["intents"]
    for q in doc["requirements"]:
        yield q["value"]
    for k in doc["knowledge"]:
        yield from (k["directive"], k["context"], k["rationale"])
    for wf in doc["workflows"]:
        yield from (wf["name"], wf["description"])
        for s in wf["steps"]:
            yield from (s["description"], s["expected_outcome"])

    def section(s: dict[str, Any]) -> Iterator[str]:
        yield s["title"]
        for b in s["blocks"]:
            yield from b.get("items", [])
            yield from b.get("steps", [])
            yield b.get("text", "")
        for sub in s["subsections"]:
            yield from section(sub)

    for s in doc["sections"]:
        yield from section(s)
    for c in doc["code_examples"]:
        yield c["code"]
    yield from doc["notes"]


def fragments(doc: dict[str, Any]) -> list[str]:
    """Every piece of content of a `SkillContext.to_json()` (stripped, non-empty)."""
    return list(dict.fromkeys(t.strip() for t in _texts(doc) if t and t.strip()))


def chunk_of(text: str) -> str:
    """The part text inside one page answer (between the header and the footer lines)."""
    return text[text.index("\n\n") + 2 : text.rindex("\n\n")]


@dataclass
class Walk:
    overview: str = ""
    overview_structured: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, str] = field(default_factory=dict)  # part id -> its pages joined
    pages: int = 0
    sizes: list[int] = field(default_factory=list)  # text + JSON chars of every answer

    def corpus(self) -> str:
        return "\n".join([self.overview, *self.parts.values()])

    def missing(self, doc: dict[str, Any]) -> list[str]:
        """Fragments found nowhere in what was read. Content mostly comes in document order,
        so each search starts where the last one matched (a full search when it fails):
        thousands of rules against megabytes of text stay fast."""
        corpus = self.corpus()
        lost, pos = [], 0
        for f in fragments(doc):
            at = corpus.find(f, pos)
            if at < 0:
                at = corpus.find(f)
            if at < 0:
                lost.append(f)
            else:
                pos = at
        return lost


async def walk(call: Call, key: str, size: Callable[[str, dict[str, Any]], int]) -> Walk:
    """Read `key` through `call`: the overview, then every page of every part `#index` lists."""
    out = Walk()
    text, data, err = await call(key)
    assert not err, text
    out.overview, out.overview_structured = text, data
    out.sizes.append(size(text, data))

    async def read(pid: str) -> str:
        chunks, page, pages = [], 1, 1
        while page <= pages:
            text, data, err = await call(f"{key}#{pid}/{page}")
            assert not err, text
            assert data["kind"] == "skill-part" and data["part"] == pid, data
            pages = data["pages"]
            chunks.append(chunk_of(text))
            out.sizes.append(size(text, data))
            out.pages += 1
            page += 1
        return "".join(chunks)

    index = await read("index")
    out.parts["index"] = index
    for pid in dict.fromkeys(_ID_RE.findall(index)):
        if pid not in out.parts:
            out.parts[pid] = await read(pid)
    return out
