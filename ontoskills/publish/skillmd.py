"""`pack --from-skill-md`: SKILL.md folders -> minimal valid OntoSkills Turtle.

For authors without the OntoSkills compiler. Each `SKILL.md` (YAML frontmatter + markdown)
becomes `<its folder>/ontoskill.ttl` holding one `oc:Skill` node with the identifier, name,
description, category, aliases, `oc:resolvesIntent` and `oc:dependsOnSkill` from the
frontmatter, and the markdown body as ordered sections of typed text blocks (paragraphs,
code, lists, quotes), in the vocabulary the compiler uses. The SKILL.md itself stays in the
package and its `files` array: `ontoskills serve` hands it to Skills-extension hosts as is.
What it leaves out compared with the full compiler is listed in docs/PUBLISHING.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from markdown_it import MarkdownIt
from markdown_it.token import Token

from .. import limits, yamlio
from ..errors import FormatError, LimitExceededError, UsageError
from ..fsutil import atomic_write_bytes
from ..ownership import Keep, check_target, replace_output
from ..safety import check_name, split_package_id
from ..skillheader import DCTERMS, DCTERMS_ID, OC, RDF_TYPE, SKILL_CLASS, XSD, dependency_iri
from .files import copy_files, stat_files, walk_package
from .pack import MAIN, PackResult, _existing, pack

SKILL_MD = "SKILL.md"
_TYPE = ox.NamedNode(RDF_TYPE)
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|[0-9]+[.)])\s+")
PREFIXES = {"oc": OC, "dcterms": DCTERMS, "xsd": XSD}


@dataclass(frozen=True)
class SkillMd:
    id: str
    description: str
    category: str
    intents: tuple[str, ...]
    aliases: tuple[str, ...]
    depends_on: tuple[str, ...]
    body: str


def _str_list(meta: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = meta.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError(f"{where}: frontmatter {key!r} must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def parse_skill_md(text: str, where: str) -> SkillMd:
    m = _FRONTMATTER.match(text)
    if not m:
        raise FormatError(
            f"{where}: no YAML frontmatter",
            hint="start the file with ---, name:, description:, ---",
        )
    meta = (
        yamlio.loads(
            m[1],
            source=f"{where}: frontmatter",
            error=FormatError,
            max_bytes=limits.MAX_FRONTMATTER_BYTES,
            hint="fix the YAML between the --- lines (name:, description:, ...)",
        )
        or {}
    )
    if not isinstance(meta, dict):
        raise FormatError(f"{where}: frontmatter must be a mapping")
    name = check_name(meta.get("name"), f"skill name in {where}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise FormatError(f"{where}: frontmatter needs a non-empty 'description'")
    deps = _str_list(meta, "depends_on", where)
    for dep in deps:
        check_name(dep, f"dependency in {where}")
    category = meta.get("category", "general")
    return SkillMd(
        id=name,
        description=" ".join(description.split()),
        category=category if isinstance(category, str) else "general",
        intents=_str_list(meta, "intents", where),
        aliases=_str_list(meta, "aliases", where),
        depends_on=deps,
        body=text[m.end() :],
    )


class _Graph:
    """Triples with deterministic blank-node ids, serialized in insertion order."""

    def __init__(self) -> None:
        self.triples: list[ox.Triple] = []
        self._n = 0

    def bnode(self) -> ox.BlankNode:
        self._n += 1
        return ox.BlankNode(f"b{self._n}")

    def add(self, s: ox.NamedNode | ox.BlankNode, p: str, o: object) -> None:
        pred = ox.NamedNode(p if p.startswith("http") else OC + p)
        if isinstance(o, bool):
            obj: Any = ox.Literal("true" if o else "false", datatype=ox.NamedNode(XSD + "boolean"))
        elif isinstance(o, int):
            obj = ox.Literal(str(o), datatype=ox.NamedNode(XSD + "integer"))
        elif isinstance(o, str):
            obj = ox.Literal(o)
        else:
            obj = o
        self.triples.append(ox.Triple(s, pred, obj))

    def typed(self, cls: str) -> ox.BlankNode:
        node = self.bnode()
        self.triples.append(ox.Triple(node, _TYPE, ox.NamedNode(OC + cls)))
        return node


def skill_iri(package_id: str, skill_id: str) -> str:
    author, pkg = package_id.split("/")
    return OC + re.sub(r"[^A-Za-z0-9_]", "_", f"skill_{author}_{pkg}_{skill_id}")


def _block(g: _Graph, tokens: list[Token], i: int, lines: list[str], order: int) -> ox.BlankNode:
    tok = tokens[i]
    raw = "\n".join(lines[tok.map[0] : tok.map[1]]).strip() if tok.map else tok.content
    if tok.type == "paragraph_open":
        node = g.typed("Paragraph")
        g.add(node, "blockType", "paragraph")
        g.add(node, "textContent", tokens[i + 1].content.replace("\n", " "))  # soft breaks
    elif tok.type in ("fence", "code_block"):
        node = g.typed("CodeExample")
        g.add(node, "blockType", "code_block")
        g.add(node, "codeContent", tok.content)
        g.add(node, "codeLanguage", tok.info.strip())
    elif tok.type in ("bullet_list_open", "ordered_list_open"):
        node = g.typed("BulletList")
        g.add(node, "blockType", "bullet_list")
        level, n = tok.level + 1, 0
        for t in tokens[i + 1 :]:
            if t.type == "list_item_open" and t.level == level and t.map:
                n += 1
                text = "\n".join(lines[t.map[0] : t.map[1]]).strip()
                item = g.typed("BulletItem")
                g.add(item, "blockType", "bullet_item")
                g.add(item, "itemOrder", n)
                g.add(item, "itemText", _LIST_MARKER.sub("", text, count=1))
                g.add(node, "hasItem", item)
            elif t.type == tok.type.replace("_open", "_close") and t.level == tok.level:
                break
    elif tok.type == "blockquote_open":
        node = g.typed("BlockQuote")
        g.add(node, "blockType", "blockquote")
        g.add(node, "quoteContent", re.sub(r"(?m)^\s*> ?", "", raw))
    elif tok.type == "table_open":
        node = g.typed("Table")
        g.add(node, "blockType", "table")
        g.add(node, "tableMarkdown", raw)
    elif tok.type == "html_block":
        node = g.typed("HTMLBlock")
        g.add(node, "blockType", "html_block")
        g.add(node, "htmlContent", tok.content)
    else:  # rules and anything else: kept as their markdown text
        node = g.typed("Paragraph")
        g.add(node, "blockType", "paragraph")
        g.add(node, "textContent", raw)
    g.add(node, "contentOrder", order)
    return node


def skill_turtle(package_id: str, skill: SkillMd) -> bytes:
    """The Turtle module for one SKILL.md (deterministic bytes)."""
    g = _Graph()
    s = ox.NamedNode(skill_iri(package_id, skill.id))
    g.triples.append(ox.Triple(s, _TYPE, ox.NamedNode(SKILL_CLASS)))
    g.add(s, DCTERMS_ID, skill.id)
    g.add(s, "hasName", skill.id)
    g.add(s, "hasDescription", skill.description)
    g.add(s, "hasCategory", skill.category)
    for alias in skill.aliases:
        g.add(s, "hasAlias", alias)
    for intent in skill.intents:
        g.add(s, "resolvesIntent", intent)
    for dep in skill.depends_on:
        g.add(s, "dependsOnSkill", ox.NamedNode(dependency_iri(dep)))
    lines = skill.body.splitlines()
    tokens = MarkdownIt("commonmark").enable("table").parse(skill.body)
    section: ox.BlankNode | None = None
    order = block_order = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level == 0 and tok.type == "heading_open":
            section, block_order = None, 0
            order += 1
            section = g.typed("Section")
            g.add(section, "sectionTitle", tokens[i + 1].content)
            g.add(section, "sectionLevel", int(tok.tag[1:]))
            g.add(section, "sectionOrder", order)
            g.add(s, "hasSection", section)
            i += 3
            continue
        if tok.level == 0 and (
            tok.nesting == 1 or tok.type in ("fence", "code_block", "html_block", "hr")
        ):
            if section is None:  # text before the first heading
                section = g.typed("Section")
                g.add(section, "sectionTitle", "")
                g.add(section, "sectionLevel", 0)
                g.add(section, "sectionOrder", 0)
                g.add(s, "hasSection", section)
            block_order += 1
            g.add(section, "hasContent", _block(g, tokens, i, lines, block_order))
        i += 1
    out = ox.serialize(g.triples, format=ox.RdfFormat.TURTLE, prefixes=PREFIXES)
    return out if isinstance(out, bytes) else b""


def convert(
    src: Path,
    out: Path | None = None,
    *,
    package_id: str | None = None,
    version: str | None = None,
    description: str | None = None,
    write: bool = True,
    keep: Sequence[Keep] = (),
) -> PackResult:
    """Write `ontoskill.ttl` for every SKILL.md under src (into out, default src), then pack.

    Every source file's type and size are checked before anything is read or written. An
    `out` folder is a folder the user names (ownership.py): never the sources or a `keep`
    folder, replaced only when it is a previous output of ours, built beside it and swapped
    in, so nothing is written when the answer is no and a failure keeps the old output."""
    old = _existing(src)
    pid = package_id or old.get("package_id")
    if not isinstance(pid, str):
        raise UsageError(f"{src}: no package id", hint="pass --id author/package")
    split_package_id(pid, "package id")
    real_out = None
    if out is not None and write:
        real_out = check_target(
            out,
            [Keep("the sources", src), *keep],
            what="--out",
            hint="choose an --out folder apart from the sources, the home and the cache "
            "(or omit --out to convert in place)",
        )
    files = stat_files(
        src, walk_package(src), read_whole={SKILL_MD: limits.MAX_SKILL_MD_BYTES}
    )
    sources = [f.path for f in files if f.path.rsplit("/", 1)[-1] == SKILL_MD]
    if not sources:
        raise UsageError(f"{src}: no SKILL.md found", hint="one folder per skill, each a SKILL.md")
    modules: dict[str, bytes] = {}
    seen: dict[str, str] = {}
    for rel in sources:
        data = _read_skill_md(src / rel, rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"{rel}: not valid UTF-8") from None
        skill = parse_skill_md(text, rel)
        if skill.id in seen:
            raise FormatError(f"skill name {skill.id!r} is used by {seen[skill.id]} and {rel}")
        seen[skill.id] = rel
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        modules[folder + MAIN] = skill_turtle(pid, skill)
    target = out or src
    if not write:
        return PackResult(target, {"package_id": pid, "modules": sorted(modules)}, b"", [])

    def build(folder: Path) -> PackResult:
        if folder != src:
            copy_files(src, folder, files)
        for rel, data in modules.items():
            dest = folder / rel
            if not dest.is_file() or dest.read_bytes() != data:
                atomic_write_bytes(dest, data)
        return pack(
            folder,
            package_id=pid,
            version=version or old.get("version"),
            description=description if description is not None else old.get("description"),
        )

    if real_out is None:
        return build(src)
    result = replace_output(real_out, build, what="--out", given=target)
    result.root = target
    return result


def _read_skill_md(path: Path, rel: str) -> bytes:
    """Bounded before it is read: fstat first, a regular file only, at most the limit + 1
    bytes (a sparse 1 GiB SKILL.md was read whole, 1 GiB of RSS, then refused)."""
    try:
        return limits.read_regular_file(
            path, limits.MAX_SKILL_MD_BYTES, what="SKILL.md", error=LimitExceededError
        )
    except LimitExceededError as exc:
        raise LimitExceededError(
            exc.message.replace(str(path), rel, 1),
            hint=exc.hint
            or f"a SKILL.md is read whole: keep it under {limits.MAX_SKILL_MD_BYTES} bytes "
            "and move long material into files it links",
        ) from None
