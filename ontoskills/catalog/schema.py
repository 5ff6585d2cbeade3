"""The `ontology://schema` summary: classes and properties actually in use (compact JSON)."""

from __future__ import annotations

from collections import Counter
from typing import Any

PREFIXES = {
    "oc": "https://ontoskills.sh/ontology#",
    "dcterms": "http://purl.org/dc/terms/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "prov": "http://www.w3.org/ns/prov#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}
MAX_SCHEMA_BYTES = 4000
# Never advertised: it leaks absolute paths of the compiling machine (quirk 13).
_HIDDEN = {"http://www.w3.org/ns/prov#wasDerivedFrom"}


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
    import json

    while len(json.dumps(doc, separators=(",", ":"))) > MAX_SCHEMA_BYTES and (cls or props):
        (props if len(props) >= len(cls) else cls).pop()
    return doc
