"""The `ontology://schema` summary: classes and properties actually in use (compact JSON)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..skillheader import DCTERMS, OC, PROV, RDF, SKOS

PREFIXES = {"oc": OC, "dcterms": DCTERMS, "skos": SKOS, "prov": PROV, "rdf": RDF}
MAX_SCHEMA_BYTES = 4000
# How a model reads a skill: one short paragraph, first in the resource.
FLOW = (
    "Use the `ontoskill` tool in steps. 1) Search: q = the task in plain words -> ranked skill "
    "ids. 2) Overview: q = a skill id -> description, requirements, the most severe "
    "knowledge, the workflow outline and an index of the skill's parts with their sizes (the "
    "whole skill when it is small). 3) Parts: q = '<skill id>#<part id>' (about, knowledge, "
    "workflow-..., section-..., module-..., code, code-N, index) -> that part; a long part "
    "comes in pages, '<skill id>#<part id>/2'. Each answer fits one budget and names the "
    "next call. The classes and properties below are what the skills' Turtle uses."
)
# Never advertised: it leaks absolute paths of the compiling machine (quirk 13).
_HIDDEN = {PROV + "wasDerivedFrom"}


def compact(iri: str) -> str | None:
    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns) and len(iri) > len(ns):
            return f"{prefix}:{iri[len(ns) :]}"
    return None


def build_schema(classes: Counter[str], properties: Counter[str]) -> dict[str, Any]:
    """Most used first; unknown namespaces dropped; trimmed to stay under 4 KB."""
    cls = [n for n in (compact(c) for c, _ in classes.most_common()) if n]
    props = [n for n in (compact(p) for p, _ in properties.most_common() if p not in _HIDDEN) if n]
    used = {p.split(":", 1)[0] for p in [*cls, *props]}
    doc: dict[str, Any] = {
        "prefixes": {k: v for k, v in PREFIXES.items() if k in used},
        "classes": cls,
        "properties": props,
    }
    return _trim(doc)


def _trim(doc: dict[str, Any]) -> dict[str, Any]:
    cls, props = doc["classes"], doc["properties"]
    while len(json.dumps(doc, separators=(",", ":"))) > MAX_SCHEMA_BYTES and (cls or props):
        (props if len(props) >= len(cls) else cls).pop()
    return doc


def with_flow(schema: dict[str, Any]) -> dict[str, Any]:
    """The resource as served: the flow paragraph first, then the schema, still < 4 KB.

    Added when served rather than stored in the snapshot, so the paragraph follows the
    code, not the age of the derived index.
    """
    doc = {"flow": FLOW, **{k: v for k, v in schema.items() if k != "flow"}}
    doc["classes"] = list(doc.get("classes", []))
    doc["properties"] = list(doc.get("properties", []))
    return _trim(doc)
