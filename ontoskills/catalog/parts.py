"""A skill's context split into parts a model can ask for one at a time (progressive disclosure).

One split, several renderers: the MCP tool (disclosure.py) answers with an overview or one
part (a page of it when it is long) within a character budget; the Skills extension can write
the same parts as files linked from a generated SKILL.md.

Part ids are short, readable and stable: they come from the Turtle only (titles, workflow
ids, module identifiers, positions), never from a budget, so the same Turtle always gives the
same ids. Kinds and ids:

  about           description, aliases, every intent, requirements, modules, files, notes
  knowledge       every knowledge rule, most severe first
  workflow-<id>   one workflow with its ordered steps
  section-<slug>  one section (any depth) with its subsections
  module-<slug>   one sub-module: its description and sections
  code, code-<n>  every code example / the n-th one (document order)
  index           every part, nested, with its size

Every knowledge rule, workflow step, section block and code example of the context is in at
least one part. A section longer than `inline_limit` lists its subsections (parts of their
own) instead of inlining them, so a model can walk a 200k-character section by its headings.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .render import (
    fence,
    file_lines,
    knowledge_line,
    requirement_line,
    section_head_lines,
    section_lines,
    workflow_lines,
)

if TYPE_CHECKING:
    from .context import SkillContext

SLUG_CHARS = 40
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int | None = SLUG_CHARS) -> str:
    """'1.2 Defer Await Until Needed' -> '1-2-defer-await-until-needed' (ASCII, cut at a word)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    out = _NON_ALNUM.sub("-", folded).strip("-")
    if limit is not None and len(out) > limit:
        cut = out[:limit]
        out = cut.rsplit("-", 1)[0] if "-" in cut else cut
    return out


def size_label(chars: int) -> str:
    if chars < 1000:
        return f"{chars} chars"
    if chars < 100_000:
        return f"{chars / 1000:.1f}k chars"
    return f"{round(chars / 1000):,}k chars"


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text[: limit * 2].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Part:
    id: str
    kind: str  # about | knowledge | workflow | section | module | code | code-all | index
    title: str
    text: str  # complete markdown; pages (disclosure.py) are slices of it
    parent: str | None = None
    children: tuple[str, ...] = ()  # parts this one lists instead of inlining
    items: int = 0  # rules, steps, subsections or examples it holds
    depth: int = 0  # nesting in the index

    @property
    def chars(self) -> int:
        return len(self.text)


@dataclass
class SkillParts:
    key: str
    parts: dict[str, Part]  # in index order
    top: tuple[str, ...]  # what an overview lists (sections and modules at the top level)
    full_chars: int  # length of the full context text (`show`)
    _by_title: dict[str, str] = field(default_factory=dict, repr=False)

    def find(self, spec: str) -> Part | None:
        """The part `spec` names: an id, an id without its kind prefix, or a title."""
        want = spec.strip().lstrip("#").strip()
        if not want:
            return None
        if want in self.parts:
            return self.parts[want]
        norm = slug(want, None)
        for cand in (norm, *(f"{k}-{norm}" for k in ("section", "workflow", "module", "code"))):
            if cand in self.parts:
                return self.parts[cand]
        if not self._by_title:
            for p in self.parts.values():
                self._by_title.setdefault(slug(p.title, None), p.id)
        pid = self._by_title.get(norm) if norm else None
        return self.parts[pid] if pid else None

    def closest(self, spec: str, n: int = 8) -> list[str]:
        norm = slug(spec.lstrip("#"), None)
        return difflib.get_close_matches(norm, list(self.parts), n=n, cutoff=0.5)


class _Ids:
    def __init__(self) -> None:
        self.used: set[str] = set()

    def make(self, kind: str, *names: str) -> str:
        base = next((s for s in (slug(n) for n in names) if s), "") or "1"
        pid, n = f"{kind}-{base}", 2
        while pid in self.used:
            pid, n = f"{kind}-{base}-{n}", n + 1
        self.used.add(pid)
        return pid


def items_label(p: Part) -> str:
    """', 12 rules' (what the part holds), or '' when it holds no counted items."""
    return f", {p.items} {_UNITS.get(p.kind, 'items')}" if p.items else ""


def _entry(p: Part) -> str:
    return f"- `#{p.id}` {one_line(p.title, 80)} ({size_label(p.chars)}{items_label(p)})"


@dataclass(frozen=True)
class Links:
    """How a part's text points at other parts and at the skill's files.

    The default is the tool's: `#id` references and the files' on-disk paths. The Skills
    extension (catalog/skilldir.py) passes relative links instead, so the same split reads
    as files linked from a SKILL.md and its bytes do not depend on where the home is.
    """

    entry: Callable[[Part], str] = _entry
    listed: str = "ask for one by its id"
    files: Callable[[SkillContext], list[str]] = file_lines


# Untitled sections (a SKILL.md's frontmatter, text before the first heading) are named by
# their first block.
_BLOCK_NAMES = {
    "FrontmatterBlock": "frontmatter",
    "Paragraph": "intro",
    "CodeExample": "code",
    "Table": "table",
    "BulletList": "list",
    "Workflow": "procedure",
    "BlockQuote": "quote",
    "HTMLBlock": "html",
    "Flowchart": "flowchart",
}
_UNITS = {
    "knowledge": "rules",
    "workflow": "steps",
    "code-all": "examples",
    "section": "subsections",
}


class _Splitter:
    def __init__(
        self, ctx: SkillContext, inline_limit: int | None, links: Links | None = None
    ) -> None:
        self.ctx, self.limit = ctx, inline_limit
        self.links = links or Links()
        self.ids = _Ids()
        self.parts: dict[str, Part] = {}
        self.order: list[str] = []  # index order (parts are created children first)

    def add(self, part: Part, slot: int | None = None) -> str:
        self.parts[part.id] = part
        if slot is None:
            self.order.append(part.id)
        else:
            self.order[slot] = part.id
        return part.id

    def _reserve(self) -> int:
        self.order.append("")
        return len(self.order) - 1

    def section(self, s: dict[str, Any], number: int, parent: str | None, depth: int) -> str:
        first = _BLOCK_NAMES.get(s["blocks"][0]["type"], "") if s["blocks"] else ""
        pid = self.ids.make("section", s["title"], first, str(number))
        slot = self._reserve()
        children = [self.section(c, n, pid, depth + 1) for n, c in enumerate(s["subsections"], 1)]
        head = section_head_lines(s)
        text = ""
        if children:
            estimate = len("\n".join(head)) + sum(self.parts[c].chars + 1 for c in children)
            if self.limit is None or estimate <= self.limit:
                lines: list[str] = []
                section_lines(lines, s)
                text = "\n".join(lines) + "\n"
            if text and self.limit is not None and len(text) > self.limit:
                text = ""
        listed: tuple[str, ...] = ()
        if not text:
            lines = list(head)
            if children:
                listed = tuple(children)
                lines.append(
                    f"\nThis section is long, so its {len(children)} subsections are parts of "
                    f"their own ({self.links.listed}):"
                )
                lines.extend(self.links.entry(self.parts[c]) for c in children)
            text = "\n".join(lines) + "\n"
        title = s["title"] or (first or "untitled section")
        part = Part(pid, "section", title, text, parent, listed, len(children), depth)
        return self.add(part, slot)

    def module(self, m: dict[str, str], sections: list[dict[str, Any]]) -> str:
        name = m["identifier"] or m["path"].rsplit("/", 1)[-1].removesuffix(".ttl")
        pid = self.ids.make("module", name, m["path"])
        slot = self._reserve()
        children = [self.section(s, n, pid, 1) for n, s in enumerate(sections, 1)]
        head = [f"# Module {name} ({m['path']})"]
        if m["description"]:
            head.append(m["description"])
        body = [self.parts[c].text.rstrip("\n") for c in children]
        text = "\n".join(head + body) + "\n"
        listed: tuple[str, ...] = ()
        if self.limit is not None and len(text) > self.limit:
            listed = tuple(children)
            text = "\n".join(
                [
                    *head,
                    "Its sections are parts of their own:",
                    *map(self.links.entry, map(self.get, listed)),
                ]
            )
            text += "\n"
        title = f"module {name}" + (f": {m['description']}" if m["description"] else "")
        return self.add(Part(pid, "module", title, text, None, listed, 0, 0), slot)

    def get(self, pid: str) -> Part:
        return self.parts[pid]

    def about(self) -> Part:
        ctx, r = self.ctx, self.ctx.record
        lines = [f"# {ctx.key} [{r.trust_tier}]"]
        if r.name and r.name != r.skill_id:
            lines.append(f"name: {r.name}")
        lines.append(r.description)
        facts = [f"{k}: {v}" for k, v in (("category", r.category), ("nature", r.nature)) if v]
        if facts:
            lines.append("; ".join(facts))
        if r.aliases:
            lines.append("aliases: " + ", ".join(r.aliases))
        if ctx.dependencies:
            lines.append("depends on: " + ", ".join(ctx.dependencies))
        if r.intents:
            lines.append(f"## Intents ({len(r.intents)})")
            lines.extend(f"- {i}" for i in r.intents)
        if ctx.requirements:
            lines.append("## Requirements")
            lines.extend(requirement_line(q) for q in ctx.requirements)
        if ctx.modules:
            lines.append("## Modules")
            lines.extend(
                f"- {m['path']}: {m['identifier']}"
                + (f" - {m['description']}" * bool(m["description"]))
                for m in ctx.modules
            )
        lines.append("## Files")
        lines.extend(self.links.files(ctx))
        lines.extend(f"note: {n}" for n in ctx.notes)
        return Part(
            "about", "about", "description, intents, requirements, files", "\n".join(lines) + "\n"
        )

    def build(self) -> SkillParts:
        ctx = self.ctx
        self.ids.used.update({"about", "knowledge", "code", "index"})
        top = [self.add(self.about())]
        if ctx.knowledge:
            text = f"# Knowledge: {len(ctx.knowledge)} rules, most severe first\n"
            text += "\n".join(knowledge_line(k) for k in ctx.knowledge) + "\n"
            top.append(
                self.add(
                    Part(
                        "knowledge", "knowledge", "knowledge rules", text, items=len(ctx.knowledge)
                    )
                )
            )
        for n, wf in enumerate(ctx.workflows, 1):
            pid = self.ids.make("workflow", wf["id"], wf["name"], str(n))
            text = "\n".join(workflow_lines(wf)) + "\n"
            title = wf["name"] or wf["id"] or f"workflow {n}"
            top.append(self.add(Part(pid, "workflow", title, text, items=len(wf["steps"]))))
        main = [s for s in ctx.sections if "module" not in s]
        top.extend(self.section(s, n, None, 0) for n, s in enumerate(main, 1))
        for m in ctx.modules:
            mine = [s for s in ctx.sections if s.get("module") == m["identifier"]]
            top.append(self.module(m, mine))
        if ctx.code_examples:
            codes = []
            for n, c in enumerate(ctx.code_examples, 1):
                where = f" from “{one_line(c['section'], 80)}”" if c["section"] else ""
                lang = f" ({c['language']})" if c["language"] else ""
                text = "\n".join(
                    [f"# Code example {n}{lang}{where}", *fence(c["code"], c["language"])]
                )
                codes.append(
                    Part(
                        f"code-{n}", "code", f"code example {n}{lang}", text + "\n", "code", depth=1
                    )
                )
            whole = "\n".join(p.text for p in codes)
            title = f"all {len(codes)} code examples"
            top.append(self.add(Part("code", "code-all", title, whole, items=len(codes))))
            for p in codes:
                self.add(p)
        index = self.index()
        top.append(self.add(index))
        return SkillParts(ctx.key, {pid: self.parts[pid] for pid in self.order}, tuple(top), 0)

    def index(self) -> Part:
        lines = [f"# Parts of {self.ctx.key} ({len(self.order) + 1}, nested as in the skill)"]
        for pid in self.order:
            p = self.parts[pid]
            lines.append("  " * p.depth + self.links.entry(p))
        return Part("index", "index", "every part with its size", "\n".join(lines) + "\n")


def split_parts(
    ctx: SkillContext,
    inline_limit: int | None = None,
    full_chars: int | None = None,
    links: Links | None = None,
) -> SkillParts:
    """The parts of `ctx`; sections over `inline_limit` characters list their subsections.
    `full_chars`: the length of `ctx.render()` when the caller has it already; `links`: how
    parts point at each other and at files (default: the tool's `#id` references)."""
    parts = _Splitter(ctx, inline_limit, links).build()
    parts.full_chars = len(ctx.render()) if full_chars is None else full_chars
    return parts
