"""Read the skill header of one Turtle module (the subject typed oc:Skill), and the text
search indexes from its body.

Only the literals search needs are kept; full context is parsed lazily (context.py). The
body text is collected by predicate in the same pass over the quads (no graph walk), so
indexing what a skill says costs no second parse. Every module is parsed on its own
(quirk 11: named nodes collide across files).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from ..errors import FormatError
from .model import local_name as local_name  # re-exported for context.py

OC = "https://ontoskills.sh/ontology#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DCTERMS_ID = "http://purl.org/dc/terms/identifier"
SKILL_CLASS = OC + "Skill"

_SINGLE = {
    DCTERMS_ID: "identifier",
    OC + "hasName": "name",
    OC + "hasDescription": "description",
    OC + "hasCategory": "category",
    OC + "nature": "nature",
    OC + "extends": "extends",
    OC + "contentHash": "content_hash",
    OC + "differentia": "differentia",
}
# What a skill says, by the property holding it: the body search indexes below the header.
# Section titles, knowledge directives, workflow names and step texts (dc:description is
# also a workflow's summary); prose (paragraphs, list items, rationales, contexts, outcomes)
# is collected separately so ranking can weigh it on its own.
BODY_PROPS = {
    OC + "sectionTitle": "say",
    OC + "directiveContent": "say",
    OC + "workflowName": "say",
    "http://purl.org/dc/terms/description": "say",
    OC + "textContent": "prose",
    OC + "itemText": "prose",
    OC + "hasRationale": "prose",
    OC + "appliesToContext": "prose",
    OC + "expectedOutcome": "prose",
}
BODY_MAX_CHARS = 262_144  # per module and kind: bounded work for any input
_MULTI = {
    OC + "hasAlias": "aliases",
    OC + "resolvesIntent": "intents",
    OC + "dependsOnSkill": "depends_on",
}


@dataclass
class ModuleHeader:
    iri: str
    identifier: str = ""
    name: str = ""
    description: str = ""
    category: str = ""
    nature: str = ""
    extends: str = ""
    content_hash: str = ""
    differentia: str = ""
    aliases: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    body: dict[str, list[str]] = field(default_factory=dict)  # "say" / "prose" -> texts


def parse_quads(data: bytes, source: str) -> list[ox.Quad]:
    try:
        return list(ox.parse(input=data, format=ox.RdfFormat.TURTLE, without_named_graphs=True))
    except (SyntaxError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FormatError(f"{source}: invalid Turtle ({first})") from None


def read_header(
    path: Path, *, usage: tuple[Counter[str], Counter[str]] | None = None
) -> ModuleHeader | None:
    """The module's skill header, or None when no subject is typed oc:Skill.

    `usage` (classes, properties) counters are updated for the schema resource.
    """
    quads = parse_quads(path.read_bytes(), str(path))
    subjects: dict[str, dict[str, list[str]]] = {}
    skills: list[str] = []
    body: dict[str, list[str]] = {}
    body_chars: Counter[str] = Counter()
    for q in quads:
        pred = q.predicate.value
        if usage is not None:
            usage[1][pred] += 1
            if pred == RDF_TYPE:
                usage[0][q.object.value] += 1
        kind = BODY_PROPS.get(pred)
        if kind is not None and isinstance(q.object, ox.Literal):
            text = q.object.value
            if body_chars[kind] + len(text) <= BODY_MAX_CHARS:
                body.setdefault(kind, []).append(text)
                body_chars[kind] += len(text)
        if not isinstance(q.subject, ox.NamedNode):
            continue
        if pred == RDF_TYPE and q.object.value == SKILL_CLASS:
            skills.append(q.subject.value)
        elif pred in _SINGLE or pred in _MULTI:
            subjects.setdefault(q.subject.value, {}).setdefault(pred, []).append(q.object.value)
    if not skills:
        return None
    # Several typed subjects would be odd; the one with an identifier wins, then the first.
    iri = next((s for s in skills if DCTERMS_ID in subjects.get(s, {})), skills[0])
    props = subjects.get(iri, {})
    head = ModuleHeader(iri=iri, body=body)
    for pred, attr in _SINGLE.items():
        values = props.get(pred)
        if values:
            setattr(head, attr, sorted(values)[0].strip())
    for pred, attr in _MULTI.items():
        setattr(head, attr, sorted({v.strip() for v in props.get(pred, []) if v.strip()}))
    return head
