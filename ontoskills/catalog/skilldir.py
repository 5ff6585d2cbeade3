"""A skill as an Agent Skills directory: a generated SKILL.md and the part files it links.

The second renderer of the split in parts.py (the first is disclosure.py, the `ontoskill`
tool's answers): the same parts, written as files for the MCP Skills extension.

* SKILL.md: YAML frontmatter (`name`, `description`, `metadata`), then the whole skill when
  it fits the Agent Skills size guidance for a SKILL.md body (BODY_CHARS characters and
  BODY_LINES lines: ~5,000 tokens, under 500 lines); otherwise an overview (description,
  intents, requirements, the most severe knowledge rules, the workflow outline) that links
  the parts, plus the skill's installed files.
* `references/<part id>.md`: every part a reader can reach from SKILL.md (the top-level parts
  and the subsections a long section lists instead of inlining), page 1; a part longer than
  PAGE_CHARS continues in `references/<part id>.<n>.md` (cut at headings, then lines, as the
  tool pages it). `references/index.md` lists them all, nested. Part ids have no dots, so a
  page file never collides with a part. When the package itself has files under
  `references/`, the generated folder takes the first free name of `references-generated`,
  `references-generated-2`, ...

Links are relative to the skill's root (the folder holding SKILL.md), as the Agent Skills
format and the extension resolve them. The bytes depend only on the context (the verified
Turtle), the frontmatter and the installed files' paths and sizes: never on where the home
is, the clock, or a budget chosen at run time; `renderer_version()` names this code.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .disclosure import paginate
from .parts import Links, Part, SkillParts, items_label, one_line, size_label, split_parts
from .render import knowledge_line, render_context, requirement_line

if TYPE_CHECKING:
    from .context import SkillContext

SKILL_MD = "SKILL.md"
BODY_CHARS = 16_000  # Agent Skills: a SKILL.md body under ~5,000 tokens ...
BODY_LINES = 450  # ... and 500 lines
PAGE_CHARS = 16_000  # one part file; longer parts continue in page files
REFERENCES = "references"
DESCRIPTION_CHARS = 1024  # Agent Skills: description is 1-1024 characters
NAME_CHARS = 64
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # Agent Skills naming rule

# The modules whose code decides the bytes; their source is part of the renderer version.
_RENDER_MODULES = (
    "skilldir.py",
    "parts.py",
    "render.py",
    "disclosure.py",
    "extract.py",
    "walkbudget.py",
)


@dataclass(frozen=True)
class InstalledFile:
    """A file of the skill as installed: path relative to the skill's folder, size in bytes."""

    path: str
    size: int


def valid_name(name: str) -> bool:
    return len(name) <= NAME_CHARS and NAME_RE.fullmatch(name) is not None


def sanitize_name(name: str) -> str:
    """A valid Agent Skills name close to `name`: 'image_editing' -> 'image-editing'."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    out = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:NAME_CHARS].strip("-")
    return out or "skill"


@cache
def renderer_version() -> str:
    """Names the code that makes the bytes: a change to any renderer module, the package
    version, the Turtle parser or the Unicode tables gives a new version."""
    import pyoxigraph

    from .. import __version__

    h = hashlib.sha256(f"{__version__}|{pyoxigraph.__version__}|".encode())
    h.update(unicodedata.unidata_version.encode())
    here = Path(__file__).parent
    for name in _RENDER_MODULES:
        h.update(name.encode() + b"\0" + (here / name).read_bytes())
    return h.hexdigest()[:32]


# ---------------------------------------------------------------------- frontmatter
_PLAIN = re.compile(r"[a-z][a-z0-9-]*")
# YAML 1.1 reads these plain words as booleans or null; quote them (YAML 1.2 readers agree).
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
# Characters YAML does not allow raw in a double-quoted scalar, or reads as line breaks.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def _scalar(value: str) -> str:
    if _PLAIN.fullmatch(value) and value not in _YAML_WORDS:
        return value
    text = json.dumps(value, ensure_ascii=False)  # JSON escapes are valid YAML escapes
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def frontmatter_text(frontmatter: dict[str, Any]) -> str:
    """The YAML block for a frontmatter of strings and one level of string maps. Written by
    hand, so every YAML 1.1 and 1.2 reader reads back exactly `frontmatter`."""
    lines = ["---"]
    for key, value in frontmatter.items():
        if isinstance(value, dict):
            lines.append(f"{_scalar(key)}:")
            lines.extend(f"  {_scalar(k)}: {_scalar(v)}" for k, v in value.items())
        else:
            lines.append(f"{_scalar(key)}: {_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def clean_text(text: str) -> str:
    """Text as UTF-8 can carry it (a lone surrogate becomes U+FFFD)."""
    return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


# ---------------------------------------------------------------------- links
def link(path: str, label: str | None = None) -> str:
    """A markdown link to a path relative to the skill's root."""
    target = f"<{path}>" if re.search(r"[\s()<>]", path) else path
    text = (label or path).replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({target})"


def references_dir(installed: Sequence[InstalledFile]) -> str:
    """Where generated part files go: `references`, unless the package uses that name."""
    taken = {f.path.split("/", 1)[0] for f in installed}
    name, n = REFERENCES, 1
    while name in taken:
        name = f"{REFERENCES}-generated" + (f"-{n}" if n > 1 else "")
        n += 1
    return name


def file_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def files_lines(installed: Sequence[InstalledFile]) -> list[str]:
    return [f"- {link(f.path)} ({file_size(f.size)})" for f in installed]


# ---------------------------------------------------------------------- the directory
class _Writer:
    def __init__(
        self,
        ctx: SkillContext,
        frontmatter: dict[str, Any],
        installed: Sequence[InstalledFile],
        notes: Sequence[str],
    ) -> None:
        self.ctx, self.installed, self.notes = ctx, installed, notes
        self.head = frontmatter_text(frontmatter) + "\n"
        self.refs = references_dir(installed)
        self.files: dict[str, str] = {}
        self._pages: dict[str, list[str]] = {}

    def files_block(self, _ctx: SkillContext) -> list[str]:
        lines = [f"Files of this skill (paths relative to its root; {len(self.installed)} in all):"]
        return lines + files_lines(self.installed) + [f"note: {n}" for n in self.notes]

    def part_path(self, p: Part, page: int = 1) -> str:
        return f"{self.refs}/{p.id}.md" if page == 1 else f"{self.refs}/{p.id}.{page}.md"

    def pages(self, p: Part) -> list[str]:
        if p.id not in self._pages:
            self._pages[p.id] = paginate(p.text, PAGE_CHARS)
        return self._pages[p.id]

    def entry(self, p: Part) -> str:
        pages = len(self.pages(p))
        extra = f", {pages} pages" if pages > 1 else ""
        return (
            f"- {link(self.part_path(p), one_line(p.title, 80))} "
            f"({size_label(p.chars)}{items_label(p)}{extra})"
        )

    def render(self) -> dict[str, str]:
        whole = render_context(self.ctx, files=self.files_block)
        if len(whole) <= BODY_CHARS and whole.count("\n") <= BODY_LINES:
            self.files[SKILL_MD] = self.head + whole
            return self.files
        links = Links(entry=self.entry, listed="each in a file of its own", files=self.files_block)
        parts = split_parts(self.ctx, PAGE_CHARS, len(whole), links)
        reachable = self.reachable(parts)
        self.files[SKILL_MD] = self.head + self.overview(parts, reachable, len(whole))
        for pid in reachable:
            self.write_part(parts.parts[pid])
        self.files[f"{self.refs}/index.md"] = self.index(parts, reachable)
        return self.files

    def reachable(self, parts: SkillParts) -> list[str]:
        """Parts a reader reaches by links: the top level, and the subsections a long
        section lists instead of inlining; in index order."""
        seen: set[str] = set()
        stack = [pid for pid in parts.top if pid != "index"]
        while stack:
            pid = stack.pop()
            if pid not in seen:
                seen.add(pid)
                stack.extend(parts.parts[pid].children)
        return [pid for pid in parts.parts if pid in seen]

    def write_part(self, p: Part) -> None:
        pages = self.pages(p)
        for n, chunk in enumerate(pages, 1):
            text = chunk
            if n > 1:
                first = link(self.part_path(p), one_line(p.title, 80))
                text = f"(page {n} of {len(pages)} of {first})\n\n{chunk}"
            if n < len(pages):
                nxt = link(self.part_path(p, n + 1))
                text = text.rstrip("\n") + f"\n\n(continued in {nxt}, page {n + 1})\n"
            self.files[self.part_path(p, n)] = text

    def index(self, parts: SkillParts, reachable: list[str]) -> str:
        lines = [f"# Parts of {self.ctx.key} ({len(reachable)} files, nested as in the skill)"]
        for pid in reachable:
            p = parts.parts[pid]
            lines.append("  " * p.depth + self.entry(p))
        return "\n".join(lines) + "\n"

    def overview(self, parts: SkillParts, reachable: list[str], chars: int) -> str:
        ctx, r = self.ctx, self.ctx.record
        about = parts.parts["about"]
        more = f"(in full: {link(self.part_path(about))})"
        head = [f"# {ctx.key} [{r.trust_tier}]", _cut(r.description, 1500, more)]
        if r.intents:
            head.append(_joined("intents: ", r.intents, "; ", 1000, more))
        if ctx.dependencies:
            head.append(_joined("depends on: ", ctx.dependencies, ", ", 500, more))
        if ctx.requirements:
            reqs = [requirement_line(q) for q in ctx.requirements]
            head.append(_joined("requirements:\n", reqs, "\n", 1000, more))
        index_path = f"{self.refs}/index.md"
        head.append(
            f"\nThis is an overview of a skill of {size_label(chars)}. The rest is in the files "
            f"linked below (paths relative to this skill's root), one per part, each under "
            f"{size_label(PAGE_CHARS)}; read only the ones the task needs. Every part: "
            f"{link(index_path)}."
        )
        budget = Budget(BODY_CHARS - sum(len(x) + 1 for x in head), BODY_LINES - _lines(head))
        body: list[str] = []
        if ctx.knowledge:
            rules = [one_line(knowledge_line(k), 300) for k in ctx.knowledge]
            taken = budget.take(rules, 0.4)
            whole = f"all in {link(self.part_path(parts.parts['knowledge']))}"
            what = (
                f"{len(rules)} rules"
                if len(taken) == len(rules)
                else f"the {len(taken)} most severe of {len(rules)} rules"
            )
            body.append(f"## Knowledge: {what}, most severe first ({whole})")
            body.extend(taken)
        workflows = [parts.parts[p] for p in parts.top if parts.parts[p].kind == "workflow"]
        if workflows:
            lines = [self.outline(p, wf) for p, wf in zip(workflows, ctx.workflows, strict=True)]
            taken = budget.take(lines, 0.4)
            body.append(f"## Workflows ({len(workflows)}; each in full in its file)")
            body.extend(taken)
            if len(taken) < len(lines):
                body.append(f"- … {len(lines) - len(taken)} more in {link(index_path)}")
        others = [
            self.entry(parts.parts[p])
            for p in parts.top
            if parts.parts[p].kind not in ("workflow", "index", "knowledge")
        ]
        taken = budget.take(others, 0.75)
        body.append("## Parts")
        body.extend(taken)
        if len(taken) < len(others):
            body.append(f"- … {len(others) - len(taken)} more in {link(index_path)}")
        files = self.files_block(ctx)
        shown = budget.take(files[1:], 1.0)
        body.extend(["## Files", files[0], *shown])
        if len(shown) < len(files) - 1:
            rest = len(files) - 1 - len(shown)
            body.append(f"- … {rest} more in {link(self.part_path(about))}")
        return "\n".join([*head, *body]) + "\n"

    def outline(self, p: Part, wf: dict[str, Any]) -> str:
        steps = "; ".join(
            f"{n}. {one_line(s['description'], 60)}" for n, s in enumerate(wf["steps"], 1)
        )
        line = (
            f"- {link(self.part_path(p), one_line(p.title, 80))} ({len(wf['steps'])} steps): "
            f"{steps}"
        )
        return one_line(line, 400)


class Budget:
    """Characters and lines left for SKILL.md's body; each block takes a share of what is
    left (and a heading's worth), so the body never goes over BODY_CHARS / BODY_LINES."""

    HEADING = 200  # a block's heading line and its "… more" line

    def __init__(self, chars: int, lines: int) -> None:
        self.chars, self.lines = chars, lines

    def take(self, items: list[str], share: float) -> list[str]:
        """The first items that fit in `share` of what is left."""
        room = int(self.chars * share) - self.HEADING
        rows = int(self.lines * share) - 2
        out: list[str] = []
        used = 0
        for item in items:
            cost = len(item) + 1
            if used + cost > room or _lines([*out, item]) > rows:
                break
            out.append(item)
            used += cost
        self.chars -= used + self.HEADING
        self.lines -= _lines(out) + 2
        return out


def _lines(block: list[str]) -> int:
    return sum(x.count("\n") + 1 for x in block)


def _cut(text: str, limit: int, more: str) -> str:
    return text if len(text) <= limit else text[: limit - len(more) - 2].rstrip() + "… " + more


def _joined(prefix: str, items: list[str], sep: str, limit: int, more: str) -> str:
    out: list[str] = []
    used = len(prefix) + len(more) + 10
    for item in items:
        piece = one_line(item, 200)
        if used + len(piece) + len(sep) > limit:
            break
        out.append(piece)
        used += len(piece) + len(sep)
    cut = len(out) < len(items) or any(a != b for a, b in zip(out, items, strict=False))
    return prefix + sep.join(out) + (f"{sep}… {more}" if cut else "")


def render_skill_dir(
    ctx: SkillContext,
    frontmatter: dict[str, Any],
    installed: Sequence[InstalledFile],
    notes: Sequence[str] = (),
) -> dict[str, bytes]:
    """The generated files of a skill, by path relative to its root, SKILL.md first.
    `installed`: the skill's files as installed (linked, never rewritten); `notes`: lines
    for the files block (e.g. where an authors' SKILL.md moved)."""
    files = _Writer(ctx, frontmatter, installed, notes).render()
    return {path: clean_text(text).encode("utf-8") for path, text in files.items()}
