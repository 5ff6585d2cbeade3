"""The one SKILL.md compiler: an Agent Skills folder's `SKILL.md` -> OntoSkills Turtle.

Used by `pack --from-skill-md` (publish/skillmd.py, for maintainers) and by registries of
kind `skills` (sources/skills.py, at install): offline, no model, deterministic bytes (the
same SKILL.md always gives the same module, so a lock can record and re-check it).

What becomes what: the frontmatter -> the `oc:Skill` node (identifier, name, description,
category, aliases, intents, dependencies); the description's "use when ..." clauses (and its
first sentence) -> `oc:resolvesIntent`; headings -> ordered sections of typed blocks
(paragraphs, code -> `oc:CodeExample`, lists, quotes, tables, HTML); rules in lists or short
paragraphs ("never", "always", "must", "do not") -> `oc:impartsKnowledge` nodes with a
severity, the section title as their context. The vocabulary is the compiler's, so the
catalog, search, `show`, parts and budgets read it as they read compiled packages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox
from markdown_it import MarkdownIt
from markdown_it.token import Token

from . import limits, yamlio
from .errors import FormatError
from .safety import check_name
from .skillheader import DCTERMS, DCTERMS_ID, OC, RDF_TYPE, SKILL_CLASS, XSD, dependency_iri

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
    declared_name: object = None  # the frontmatter's `name` as written (skills kind: a warning)


def _str_list(meta: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = meta.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError(f"{where}: frontmatter {key!r} must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def parse_skill_md(text: str, where: str, *, skill_id: str | None = None) -> SkillMd:
    """The frontmatter (bounded YAML, yamlio) and the body. The skill's id is the
    frontmatter `name` (checked like every name), or `skill_id` when the caller decides it
    (a skills registry: the folder name; a different `name` is the caller's warning)."""
    text = text.removeprefix("\ufeff")
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
            unique_keys=True,
        )
        or {}
    )
    if not isinstance(meta, dict):
        raise FormatError(f"{where}: frontmatter must be a mapping")
    declared = meta.get("name")
    name = skill_id if skill_id is not None else check_name(declared, f"skill name in {where}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise FormatError(f"{where}: frontmatter needs a non-empty 'description'")
    deps = _str_list(meta, "depends_on", where)
    for dep in deps:
        check_name(dep, f"dependency in {where}")
    category = meta.get("category", "general")
    description = " ".join(description.split())
    return SkillMd(
        id=name,
        description=description,
        category=category if isinstance(category, str) else "general",
        # the author's own intents when listed, else what the description states
        intents=_str_list(meta, "intents", where) or description_intents(description),
        aliases=_str_list(meta, "aliases", where),
        depends_on=deps,
        body=text[m.end() :],
        declared_name=declared,
    )


def _merge(*groups: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for text in (t for g in groups for t in g):
        seen.setdefault(text.lower(), text)
    return tuple(seen.values())


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
# "Use when ...", "Use this skill when ...", "Use before ...", "Triggers when ...",
# "when the user asks/wants ...": what an agent's request sounds like.
_USE_WHEN = re.compile(
    r"\b(?:use(?:d)?(?: this(?: skill)?| it)?(?: (?:only|also|especially))?"
    r" (?:when(?:ever)?|for|before|after|if|to)"
    r"|trigger(?:s|ed)? (?:when|on|for)"
    r"|(?:when|if) (?:the )?user(?:s)? (?:asks?|wants?|needs?|mentions?|requests?))\b[:,]?\s*",
    re.I,
)
# "..., use this skill": the clause ends before it
_TAIL = re.compile(r",?\s*(?:then\s+)?use (?:this|the|it)\b.*$", re.I | re.S)
_NEGATED = re.compile(r"(?:\bnot|\bnever|n['’]t)\s*$", re.I)
MAX_DESCRIPTION_INTENTS = 8
_INTENT_CHARS = 240


def description_intents(description: str) -> tuple[str, ...]:
    """Intents a description states: its first sentence (what the skill does) and every
    "use when ..." clause (when to reach for it), each cut at its sentence's end."""
    out: list[str] = []
    sentences = [s.strip() for s in _SENTENCE.split(description) if s.strip()]
    if sentences and not _USE_WHEN.match(sentences[0]):
        out.append(sentences[0].rstrip(".!? ")[:_INTENT_CHARS])
    for sentence in sentences:
        for m in _USE_WHEN.finditer(sentence):
            if _NEGATED.search(sentence[max(0, m.start() - 16) : m.start()]):
                continue  # "Do NOT use for PDFs ...": when not to reach for it
            clause = _TAIL.sub("", sentence[m.end() :]).rstrip(".!? ").strip()
            if len(clause) >= 8:
                out.append(clause[:_INTENT_CHARS])
    return _merge(tuple(out[:MAX_DESCRIPTION_INTENTS]))


# Rules: a list item or short paragraph that begins with (or, emphasised, holds) one of these.
_RULE = re.compile(
    r"^(?:\W{0,4})((?i:never|always|must not|must|do not|don't|don’t|avoid|only))\b"
    r"|\b(NEVER|ALWAYS|MUST NOT|MUST|DO NOT|DON'T)\b"
)
_NEGATIVE = ("never", "must not", "do not", "don't", "don’t", "avoid")
MAX_RULES = 64
_RULE_CHARS = 600


def rule_of(text: str) -> tuple[str, str] | None:
    """(knowledge class, severity) when `text` states a rule, else None. Upper-case words
    (NEVER, MUST) are what authors shout: CRITICAL; a leading "never"/"must"/"do not": HIGH;
    "always"/"only"/"avoid": MEDIUM."""
    if len(text) > _RULE_CHARS:
        return None
    m = _RULE.search(text)
    if m is None:
        return None
    raw = m[1] or m[2]
    word = raw.lower()
    kind = "AntiPattern" if word in _NEGATIVE else "Constraint"
    if raw.isupper():  # NEVER, DON'T, MUST: shouted, wherever it stands
        return kind, "CRITICAL"
    return kind, "HIGH" if word in ("never", "must", "must not", "do not", "don't") else "MEDIUM"


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
    _knowledge(g, s, tokens)
    out = ox.serialize(g.triples, format=ox.RdfFormat.TURTLE, prefixes=PREFIXES)
    return out if isinstance(out, bytes) else b""


def _knowledge(g: _Graph, s: ox.NamedNode, tokens: list[Token]) -> None:
    """Rules stated in the body -> knowledge nodes (directive, severity, the section they
    apply in), in document order, at most MAX_RULES, each text once."""
    title, seen = "", set()
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and i + 1 < len(tokens):
            title = tokens[i + 1].content
            continue
        if tok.type != "inline" or i == 0 or tokens[i - 1].type != "paragraph_open":
            continue
        text = " ".join(tok.content.replace("**", "").replace("__", "").split())
        rule = rule_of(text)
        if rule is None or text in seen:
            continue
        seen.add(text)
        node = g.typed("KnowledgeNode")
        g.triples.append(ox.Triple(node, _TYPE, ox.NamedNode(OC + rule[0])))
        g.add(node, "directiveContent", text)
        g.add(node, "severityLevel", rule[1])
        if title:
            g.add(node, "appliesToContext", title)
        g.add(s, "impartsKnowledge", node)
        if len(seen) >= MAX_RULES:
            return
