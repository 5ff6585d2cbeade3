"""The one reader of compiled OntoSkills Turtle modules: the `oc:` vocabulary, and which node
of a module is "the skill" with the header fields read from it.

Every caller reads modules through here: the catalog (search and serve), `pack`/`publish`/
`registry verify`, intent vectors (`embeddings/`), the full-context walk (`catalog/context.py`,
which picks its subject with `skill_node`) and install's checks. The rules, one set for all:

- Syntax is always strict Turtle (pyoxigraph): a module that does not parse is FormatError
  (exit 4), whoever reads it. (Intent vectors used pyoxigraph's lenient mode, so they were
  derived for modules the catalog refused to serve.)
- The skill is a subject typed `oc:Skill` that is an IRI. `lenient=False` (publish, registry
  verify) requires exactly one such node; `lenient=True` (what a client reads: catalog,
  vectors, context) takes, when there are several, the ones with a `dcterms:identifier`
  first and then the smallest IRI, and answers None when there is none. (The catalog took
  the first in document order, vectors the smallest IRI and fell back to any subject with an
  identifier, the context walk whatever the store listed first: one module could be three
  skills.) Every module of the public store has exactly one.
- Text fields (identifier, name, description, ...) are literals, whitespace-stripped; a
  single-valued field with several values takes the smallest; aliases and intents are sorted
  and de-duplicated. `oc:extends` and `oc:dependsOnSkill` are IRIs. (The catalog stripped,
  `pack` did not: a description ending in a space was published with it.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, overload

from .errors import FormatError

if TYPE_CHECKING:  # imported by the functions that parse: the vocabulary and `local_name`
    import pyoxigraph as ox  # (search's name index) must not load pyoxigraph (~14 MB)

# ------------------------------------------------------------------------- vocabulary
OC = "https://ontoskills.sh/ontology#"
ONTOLOGY_IRI = "https://ontoskills.sh/ontology"  # the reference servers' index ontology
DCTERMS = "http://purl.org/dc/terms/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
PROV = "http://www.w3.org/ns/prov#"
RDF_TYPE = RDF + "type"
DCTERMS_ID = DCTERMS + "identifier"
DCTERMS_DESCRIPTION = DCTERMS + "description"
SKILL_CLASS = OC + "Skill"
DEP_IRI_PREFIX = OC + "skill_ontoskills_"  # the store's IRIs of dependency skills

_TEXT = {
    DCTERMS_ID: "identifier",
    OC + "hasName": "name",
    OC + "hasDescription": "description",
    OC + "hasCategory": "category",
    OC + "nature": "nature",
    OC + "contentHash": "content_hash",
    OC + "differentia": "differentia",
}
_INVOCABLE = OC + "isUserInvocable"
_ALIAS, _INTENT = OC + "hasAlias", OC + "resolvesIntent"
_LITERALS = {*_TEXT, _INVOCABLE, _ALIAS, _INTENT}
_EXTENDS, _DEPENDS = OC + "extends", OC + "dependsOnSkill"
# What a skill says, by the property holding it: the body search indexes below the header.
# Section titles, knowledge directives, workflow names and step texts (dc:description is
# also a workflow's summary); prose (paragraphs, list items, rationales, contexts, outcomes)
# is collected separately so ranking can weigh it on its own.
BODY_PROPS = {
    OC + "sectionTitle": "say",
    OC + "directiveContent": "say",
    OC + "workflowName": "say",
    DCTERMS_DESCRIPTION: "say",
    OC + "textContent": "prose",
    OC + "itemText": "prose",
    OC + "hasRationale": "prose",
    OC + "appliesToContext": "prose",
    OC + "expectedOutcome": "prose",
}
BODY_MAX_CHARS = 262_144  # per module and kind: bounded work for any input


@dataclass
class SkillHeader:
    """The skill node of one module: what catalog, registry tools and vectors read."""

    iri: str
    identifier: str = ""
    name: str = ""
    description: str = ""
    category: str = ""
    nature: str = ""
    extends: str = ""  # IRI of the skill this module extends ("" for a main module)
    content_hash: str = ""  # oc:contentHash: copies of one skill share it
    differentia: str = ""  # oc:differentia: the compiler's one-line summary
    is_user_invocable: bool | None = None
    aliases: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)  # IRIs of oc:dependsOnSkill
    body: dict[str, list[str]] = field(default_factory=dict)  # "say" / "prose" -> texts
    triples: int = 0


def parse_turtle(data: bytes, source: str) -> list[ox.Quad]:
    """Every triple of a module (strict Turtle), or FormatError naming `source`."""
    import pyoxigraph as ox

    try:
        return list(ox.parse(data, format=ox.RdfFormat.TURTLE, without_named_graphs=True))
    except (SyntaxError, ValueError) as exc:
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise FormatError(f"{source}: invalid Turtle ({first})") from None


def check_turtle(data: bytes, source: str) -> None:
    """`parse_turtle`'s check without keeping the triples (install checks every module it
    writes; building the list of Python triples costs ~40% of the parse)."""
    import pyoxigraph as ox

    try:
        for _ in ox.parse(data, format=ox.RdfFormat.TURTLE, without_named_graphs=True):
            pass
    except (SyntaxError, ValueError) as exc:
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise FormatError(f"{source}: invalid Turtle ({first})") from None


def readable_text(data: bytes, quads: list[ox.Quad] | None = None) -> str:
    """What a reader of the module sees: its raw text, plus every literal and IRI with its
    escapes decoded when the bytes hold a `\\u`/`\\U` escape (one can spell a bidi control
    the raw text scan cannot see). Triple terms (`<<( s p o )>>`) are walked iteratively, so
    a deeply nested one cannot overflow. Unparseable bytes give their raw text only: the
    syntax error is reported by whoever parses them."""
    import pyoxigraph as ox

    text = data.decode("utf-8", "replace")
    if b"\\u" not in data and b"\\U" not in data:
        return text
    if quads is None:
        try:
            quads = list(ox.parse(data, format=ox.RdfFormat.TURTLE, without_named_graphs=True))
        except (SyntaxError, ValueError):
            return text
    out = [text]
    stack: list[object] = [t for q in quads for t in (q.subject, q.predicate, q.object)]
    while stack:
        term = stack.pop()
        if isinstance(term, (ox.Literal, ox.NamedNode)):
            out.append(term.value)
        elif isinstance(term, ox.Triple):
            stack.extend((term.subject, term.predicate, term.object))
    return "\n".join(out)


def skill_nodes(quads: Iterable[ox.Quad]) -> list[ox.NamedNode | ox.BlankNode]:
    """Subjects typed oc:Skill (IRIs and blank nodes), each once, in document order."""
    import pyoxigraph as ox

    seen: dict[str, ox.NamedNode | ox.BlankNode] = {}
    for q in quads:
        obj = q.object  # RDF 1.2 Turtle parses `<<( s p o )>>`: a Triple has no .value
        if q.predicate.value != RDF_TYPE or not isinstance(obj, ox.NamedNode):
            continue
        if obj.value == SKILL_CLASS:
            subject = q.subject
            if isinstance(subject, (ox.NamedNode, ox.BlankNode)):
                seen.setdefault(str(subject), subject)
    return list(seen.values())


def skill_node(quads: list[ox.Quad]) -> ox.NamedNode | None:
    """The module's skill by the lenient rule (module docstring), or None."""
    import pyoxigraph as ox

    iris = sorted((n for n in skill_nodes(quads) if isinstance(n, ox.NamedNode)), key=str)
    if len(iris) <= 1:
        return iris[0] if iris else None
    named = {
        q.subject.value
        for q in quads
        if q.predicate.value == DCTERMS_ID
        and isinstance(q.subject, ox.NamedNode)
        and isinstance(q.object, ox.Literal)
        and q.object.value.strip()
    }
    return next((n for n in iris if n.value in named), iris[0])


@overload
def read_skill_header(
    data: bytes,
    source: str,
    *,
    lenient: Literal[False],
    usage: tuple[Counter[str], Counter[str]] | None = None,
) -> SkillHeader: ...
@overload
def read_skill_header(
    data: bytes,
    source: str,
    *,
    lenient: bool,
    usage: tuple[Counter[str], Counter[str]] | None = None,
) -> SkillHeader | None: ...
def read_skill_header(
    data: bytes,
    source: str,
    *,
    lenient: bool,
    usage: tuple[Counter[str], Counter[str]] | None = None,
) -> SkillHeader | None:
    """The skill header of one module, and its body text, in one pass over the triples.

    lenient=False: exactly one `a oc:Skill` IRI node, else FormatError (exit 4).
    lenient=True: the chosen skill node, or None when the module has none.
    `usage` (classes, properties) counters are updated for the schema resource.
    """
    import pyoxigraph as ox

    quads = parse_turtle(data, source)
    if lenient:
        subject = skill_node(quads)
        if subject is None:
            return None
    else:
        nodes = skill_nodes(quads)
        if len(nodes) != 1:
            found = "no skill node" if not nodes else f"{len(nodes)} skill nodes"
            raise FormatError(
                f"{source}: expected exactly one `a oc:Skill` node, found {found}",
                hint="each module describes one skill; sub-modules use oc:extends",
            )
        if not isinstance(nodes[0], ox.NamedNode):
            raise FormatError(
                f"{source}: the `a oc:Skill` node is a blank node",
                hint="give the skill an IRI (oc:skill_...): other modules extend it by name",
            )
        subject = nodes[0]
    texts: dict[str, set[str]] = {}
    iris: dict[str, set[str]] = {}
    body: dict[str, list[str]] = {}
    body_chars: Counter[str] = Counter()
    for q in quads:
        pred, obj = q.predicate.value, q.object
        if usage is not None:
            usage[1][pred] += 1
            if pred == RDF_TYPE and isinstance(obj, ox.NamedNode):
                usage[0][obj.value] += 1
        kind = BODY_PROPS.get(pred)
        if kind is not None and isinstance(obj, ox.Literal):
            text = obj.value
            if body_chars[kind] + len(text) <= BODY_MAX_CHARS:
                body.setdefault(kind, []).append(text)
                body_chars[kind] += len(text)
        if q.subject != subject:
            continue
        if isinstance(obj, ox.Literal) and pred in _LITERALS:
            if value := obj.value.strip():
                texts.setdefault(pred, set()).add(value)
        elif isinstance(obj, ox.NamedNode) and pred in (_EXTENDS, _DEPENDS):
            iris.setdefault(pred, set()).add(obj.value)
    head = SkillHeader(iri=subject.value, body=body, triples=len(quads))
    for pred, attr in _TEXT.items():
        if values := texts.get(pred):
            setattr(head, attr, min(values))
    invocable = texts.get(_INVOCABLE)
    head.is_user_invocable = None if not invocable else min(invocable) == "true"
    head.aliases = sorted(texts.get(_ALIAS, ()))
    head.intents = sorted(texts.get(_INTENT, ()))
    head.extends = min(iris.get(_EXTENDS, ()), default="")
    head.depends_on = sorted(iris.get(_DEPENDS, ()))
    return head


def local_name(iri: str) -> str:
    """The last segment of an IRI (after # or /)."""
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def dependency_id(iri: str) -> str:
    """The skill id an `oc:dependsOnSkill` IRI names: `oc:skill_ontoskills_writing_plans` (the
    store's convention, what `dependency_iri` writes) -> `writing-plans`; a compiler's
    `oc:skill_pdf` -> `pdf`. One rule for `pack` (the manifest's `depends_on_skills`) and the
    context's Turtle dependencies (before, `pack` kept `skill-` and any foreign namespace)."""
    name = local_name(iri)
    for prefix in ("skill_ontoskills_", "skill_"):
        name = name.removeprefix(prefix)
    return name.replace("_", "-")


def dependency_iri(skill_id: str) -> str:
    return DEP_IRI_PREFIX + skill_id.replace("-", "_").replace(".", "_")
