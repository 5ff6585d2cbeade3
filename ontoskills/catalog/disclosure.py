"""Answers sized for a model: a skill's overview, or one page of one part, within a budget.

The budget counts what the client receives for one tool call: the text plus the JSON of
`structuredContent` (compact, UTF-8, as the SDK sends it). The structured side carries ids,
sizes and the part index, never a second copy of the text.

* `overview()`: the whole skill when it fits; otherwise description, intents, dependencies,
  requirements, the most severe knowledge, the workflow outline and an index of the parts
  with their ids, sizes and pages, saying how to ask for them. Whatever an overview leaves
  out is in a part it names (every part is listed in `#index`).
* `part("knowledge/2")`: page 2 of part `knowledge`. A part longer than one answer is cut
  into pages at headings, then lines, then spaces; the pages of a part concatenate to exactly
  its text. Unknown parts and pages raise NotFoundError naming the valid ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..query import parse_part
from .parts import Part, SkillParts, one_line, size_label, split_parts
from .render import knowledge_line, requirement_line

if TYPE_CHECKING:
    from .context import SkillContext

# Worst case of the variable bits of a page header: the longest part id the splitter makes
# ("section-" + a 40-char slug + a "-NNNN" suffix) and a title cut to 80 characters.
_WORST_ID = "x" * 56
_WORST_TITLE = "x" * 80
_DESC_CHARS = 1500  # an overview quotes at most this much of the description
_LINE_CHARS = 300  # ... and of one knowledge rule or workflow outline
_HEADER = 100  # room for a block's heading or "... N more" line


def json_chars(data: dict[str, Any]) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True)
class ContextAnswer:
    text: str
    structured: dict[str, Any]

    @property
    def size(self) -> int:
        """Characters the client receives: text + structuredContent JSON."""
        return len(self.text) + json_chars(self.structured)

    def to_json(self) -> dict[str, Any]:
        """`show KEY#part/N --json`: the structured side as the tool sends it, and the text."""
        return {**self.structured, "text": self.text}


def _allocate(need: dict[str, int], room: int) -> dict[str, int]:
    """Room per overview block: its share first, then what is left to the blocks that need
    more, knowledge first."""
    shares = {"knowledge": 0.4, "workflows": 0.2, "index": 0.4}
    alloc = {k: min(need[k], int(room * shares[k])) for k in need}
    left = room - sum(alloc.values())
    for k in ("knowledge", "index", "workflows"):
        extra = min(need[k] - alloc[k], left)
        alloc[k] += extra
        left -= extra
    return alloc


def _knowledge_block(knowledge: list[str], room: int) -> list[str]:
    """The most severe rules that fit `room`, under a header saying how many of how many."""
    if not knowledge:
        return []
    taken = _take(knowledge, [0] * len(knowledge), room - _HEADER)
    shown = len(taken)
    what = (
        f"{len(knowledge)} rules"
        if shown == len(knowledge)
        else (f"the {shown} most severe of {len(knowledge)} rules")
    )
    return [f"## Knowledge: {what}, most severe first (in full: `#knowledge`)", *taken]


def paginate(text: str, size: int) -> list[str]:
    """Slices of at most `size` chars that concatenate to `text`, cut at a heading, else a
    line end, else a space, when one is in the second half of the window."""
    pages: list[str] = []
    start, n = 0, len(text)
    while start < n:
        if n - start <= size:
            pages.append(text[start:])
            break
        lo, hi = start + size // 2, start + size
        cut = text.rfind("\n#", lo, hi - 1)
        end = cut + 1 if cut >= lo else -1
        if end < 0 and (cut := text.rfind("\n", lo, hi)) >= lo:
            end = cut + 1
        if end < 0 and (cut := text.rfind(" ", lo, hi)) >= lo:
            end = cut + 1
        if end < 0:
            end = hi
        pages.append(text[start:end])
        start = end
    return pages or [""]


class Disclosure:
    """The answers for one skill at one budget (build once, serve many calls)."""

    def __init__(self, ctx: SkillContext, budget: int) -> None:
        self.ctx, self.key, self.budget = ctx, ctx.key, budget
        self.full = ctx.render()
        self.inline_limit = budget - self._overhead(_WORST_ID, _WORST_TITLE, len(self.full))
        self.parts: SkillParts = split_parts(ctx, self.inline_limit, len(self.full))
        self._pages: dict[str, list[str]] = {}
        self._cached: ContextAnswer | None = None  # the overview, built on first use

    # ------------------------------------------------------------------ pages
    def _page(
        self, pid: str, title: str, chunk: str, page: int, pages: int, chars: int
    ) -> ContextAnswer:
        key = self.key
        where = f"page {page} of {pages}, " if pages > 1 else ""
        head = f"{key}#{pid}: {one_line(title, 80)} ({where}{size_label(chars)} in all)"
        if page < pages:
            foot = f'next page: ontoskill(q="{key}#{pid}/{page + 1}")'
        else:
            foot = f'end of #{pid}. Overview: ontoskill(q="{key}"); every part: "{key}#index"'
        structured = {
            "kind": "skill-part",
            "skill": key,
            "part": pid,
            "page": page,
            "pages": pages,
            "chars": chars,
            "next": f"{key}#{pid}/{page + 1}" if page < pages else None,
        }
        return ContextAnswer(f"{head}\n\n{chunk}\n\n{foot}", structured)

    def _overhead(self, pid: str, title: str, chars: int) -> int:
        """Chars of a page answer around its chunk, in the worst case: as many digits as
        any real page number (pages <= chars), and the longer of a middle page (its `next`)
        and the last one (its longer footer, `next: null`)."""
        big = max(chars, 10)
        return max(
            self._page(pid, title, "", big - 1, big, chars).size,
            self._page(pid, title, "", big, big, chars).size,
        )

    def pages(self, part: Part) -> list[str]:
        if part.id not in self._pages:
            room = self.budget - self._overhead(part.id, part.title, part.chars)
            self._pages[part.id] = paginate(part.text, max(room, 1))
        return self._pages[part.id]

    def part(self, spec: str) -> ContextAnswer:
        name, page = parse_part(spec)
        if not name:
            return self.overview()
        part = self.parts.find(name)
        if part is None:
            raise self.unknown_part(name)
        pages = self.pages(part)
        page = 1 if page is None else page
        if not 1 <= page <= len(pages):
            ref = f"{self.key}#{part.id}"
            hint = f'ask for "{ref}/1" to "{ref}/{len(pages)}"'
            raise NotFoundError(
                f"part {part.id} of {self.key} has {len(pages)} page(s), not {page}",
                hint=hint if len(pages) > 1 else f'it has one page: ask for "{ref}"',
            )
        return self._page(part.id, part.title, pages[page - 1], page, len(pages), part.chars)

    def unknown_part(self, name: str) -> NotFoundError:
        return NotFoundError(f"{self.key} has no part {name!r}", hint=self._valid_parts(name))

    def _valid_parts(self, name: str) -> str:
        close = self.parts.closest(name)
        ids = list(dict.fromkeys([*close, *self.parts.top]))
        shown, size = [], 0
        for pid in ids:
            size += len(pid) + 2
            if size > 1200:
                break
            shown.append(pid)
        more = len(self.parts.parts) - len(shown)
        tail = f" (+{more} more)" if more > 0 else ""
        return (
            f'valid parts: {", ".join(shown)}{tail}; every part with its size: "{self.key}#index"'
        )

    # ------------------------------------------------------------------ overview
    def _base(self, complete: bool) -> dict[str, Any]:
        r = self.ctx.record
        return {
            "kind": "skill",
            "skill": self.key,
            "name": r.name,
            "trust_tier": r.trust_tier,
            "complete": complete,
            "chars": len(self.full),
            "parts_total": len(self.parts.parts),
            "index": f"{self.key}#index",
            "parts": [],
        }

    def _entry(self, p: Part) -> dict[str, Any]:
        return {"id": p.id, "chars": p.chars, "pages": len(self.pages(p))}

    def overview(self) -> ContextAnswer:
        if self._cached is None:
            self._cached = self._build_overview()
        return self._cached

    def _build_overview(self) -> ContextAnswer:
        whole = ContextAnswer(
            self.full + f"(this is the whole skill: {size_label(len(self.full))})\n",
            self._base(True),
        )
        if whole.size <= self.budget:
            for pid in self.parts.top:  # the part ids too, while they fit
                whole.structured["parts"].append(self._entry(self.parts.parts[pid]))
                if whole.size > self.budget:
                    whole.structured["parts"].pop()
                    break
            return whole
        for scale in (1.0, 0.8, 0.6, 0.4, 0.2):
            answer = self._overview(scale)
            if answer.size <= self.budget:
                return answer
        return self._minimal()

    def _minimal(self) -> ContextAnswer:
        r = self.ctx.record
        text = (
            f"# {self.key} [{r.trust_tier}]\n{one_line(r.description, 300)}\n"
            f"This skill is large ({size_label(len(self.full))}). Its parts, with their ids "
            f'and sizes: ontoskill(q="{self.key}#index"); then ask for one: '
            f'ontoskill(q="{self.key}#<part id>").\n'
        )
        return ContextAnswer(text, self._base(False))

    def _overview(self, scale: float) -> ContextAnswer:
        ctx, key, budget = self.ctx, self.key, self.budget
        structured = self._base(False)
        listed: list[str] = []

        def cap(fraction: float) -> int:
            return int(budget * fraction * scale)

        head = self._head(cap)
        foot = [f"path: {ctx.to_json()['path']}", *(f"note: {n}" for n in ctx.notes)]
        guide = (
            f"Overview of a skill of {size_label(len(self.full))}; the rest is in parts. Read "
            f'one with ontoskill(q="{key}#<part id>"), e.g. q="{key}#knowledge"; a long part '
            f'comes in pages: q="{key}#knowledge/2". `#index` lists every part.'
        )
        last = self.parts.parts["index"]
        last_line = f"- `#index` every part with its size ({len(self.parts.parts)} parts)"
        fixed = len("\n".join([*head, guide, last_line, *foot])) + json_chars(structured) + 140
        fixed += json_chars(self._entry(last)) + 1
        room = max(int((budget - fixed) * scale), 0)

        wf_parts = [
            p for p in map(self.parts.parts.get, self.parts.top) if p and p.kind == "workflow"
        ]
        index_parts = [
            p
            for p in map(self.parts.parts.get, self.parts.top)
            if p and p.kind not in ("workflow", "index")
        ]

        knowledge = [one_line(knowledge_line(k), _LINE_CHARS) for k in ctx.knowledge]
        outline = [self._outline(p, wf) for p, wf in zip(wf_parts, ctx.workflows, strict=True)]
        index = [self._index_line(p) for p in index_parts]
        entry_cost = [json_chars(self._entry(p)) + 1 for p in index_parts]
        wf_cost = [json_chars(self._entry(p)) + 1 for p in wf_parts]
        need = {  # each block's lines (+ structured entries) and its header line
            "knowledge": sum(len(x) + 1 for x in knowledge) + _HEADER,
            "workflows": sum(len(x) + 1 + c for x, c in zip(outline, wf_cost, strict=True))
            + _HEADER,
            "index": sum(len(x) + 1 + c for x, c in zip(index, entry_cost, strict=True)) + _HEADER,
        }
        alloc = _allocate(need, room)

        body: list[str] = [guide, *_knowledge_block(knowledge, alloc["knowledge"])]
        if outline:
            block, shown = self._workflows_block(outline, wf_parts, wf_cost, alloc["workflows"])
            body.extend(block)
            listed.extend(p.id for p in wf_parts[:shown])
        body.append("## Parts")
        taken = _take(index, entry_cost, alloc["index"] - _HEADER)
        body.extend(taken)
        listed.extend(p.id for p in index_parts[: len(taken)])
        if len(taken) < len(index):
            body.append(f"- … {len(index) - len(taken)} more parts, listed in `#index`:")
        body.append(last_line)
        listed.append(last.id)
        structured["parts"] = [self._entry(self.parts.parts[pid]) for pid in listed]
        text = "\n".join([*head, *body, *foot]) + "\n"
        return ContextAnswer(text, structured)

    def _head(self, cap: Callable[[float], int]) -> list[str]:
        """Title, description, intents, dependencies, requirements: each within its share."""
        ctx, r = self.ctx, self.ctx.record
        head = [f"# {self.key} [{r.trust_tier}]", _cut(r.description, min(_DESC_CHARS, cap(0.12)))]
        if r.intents:
            head.append(_joined("intents: ", r.intents, "; ", cap(0.06), "#about"))
        if ctx.dependencies:
            head.append(_joined("depends on: ", ctx.dependencies, ", ", cap(0.03), "#about"))
        if ctx.requirements:
            reqs = [requirement_line(q) for q in ctx.requirements]
            head.append(_joined("requirements:\n", reqs, "\n", cap(0.06), "#about"))
        return head

    def _workflows_block(
        self, outline: list[str], wf_parts: list[Part], wf_cost: list[int], room: int
    ) -> tuple[list[str], int]:
        """(lines, how many workflows they show): the block's header line, the outlines
        that fit `room` (steps cut shorter, then names and sizes only), and a "more" line
        when some did not fit."""
        lines = outline
        for width in (160, 0):
            if sum(len(x) + 1 + c for x, c in zip(lines, wf_cost, strict=True)) <= room - _HEADER:
                break
            lines = [
                self._outline(p, wf, width) if width else self._index_line(p)
                for p, wf in zip(wf_parts, self.ctx.workflows, strict=True)
            ]
        taken = _take(lines, wf_cost, room - _HEADER)
        block = [f"## Workflows ({len(outline)}; each one in full: its part)", *taken]
        if len(taken) < len(outline):
            block.append(f"- … {len(outline) - len(taken)} more workflows: see `#index`")
        return block, len(taken)

    def _index_line(self, p: Part) -> str:
        pages = len(self.pages(p))
        extra = f", {pages} pages" if pages > 1 else ""
        if p.children:
            extra += f", lists {len(p.children)} subsections"
        return f"- `#{p.id}` {one_line(p.title, 80)} ({size_label(p.chars)}{extra})"

    def _outline(self, p: Part, wf: dict[str, Any], width: int = _LINE_CHARS) -> str:
        steps = "; ".join(
            f"{n}. {one_line(s['description'], 60)}" for n, s in enumerate(wf["steps"], 1)
        )
        line = f"- `#{p.id}` {one_line(p.title, 80)} ({len(wf['steps'])} steps): {steps}"
        return one_line(line, width)


def _take(lines: list[str], extra: list[int], allowance: int) -> list[str]:
    """The first lines whose cost (length + newline + `extra`) fits in `allowance`."""
    out, used = [], 0
    for line, cost in zip(lines, extra, strict=True):
        used += len(line) + 1 + cost
        if used > allowance:
            break
        out.append(line)
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 40, 0)].rstrip() + "… (in full: `#about`)"


def _joined(prefix: str, items: list[str], sep: str, limit: int, more: str) -> str:
    """`prefix` + as many items as fit in `limit`, then where the rest is."""
    out: list[str] = []
    used = len(prefix)
    for item in items:
        piece = one_line(item, 200)
        if used + len(piece) + len(sep) > limit - 40:
            break
        out.append(piece)
        used += len(piece) + len(sep)
    if not out:
        return (
            prefix + one_line(items[0], max(limit - len(prefix) - 60, 20)) + f" (in full: `{more}`)"
        )
    cut = len(out) < len(items) or any(a != b for a, b in zip(out, items, strict=False))
    tail = f"{sep}… (+{len(items) - len(out)} more, in full: `{more}`)" if cut else ""
    return prefix + sep.join(out) + tail


def build(ctx: SkillContext, budget: int) -> Disclosure:
    return Disclosure(ctx, budget)
