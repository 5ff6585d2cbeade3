"""Read what a registry needs from one compiled OntoSkills Turtle module (pyoxigraph).

A module holds exactly one skill node (`a oc:Skill`); a sub-module's node `oc:extends` the
main skill of its folder. Everything else (sections, knowledge nodes) is the compiler's
business and is only parsed, never interpreted here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from ..errors import FormatError

OC = "https://ontoskills.sh/ontology#"
DCTERMS = "http://purl.org/dc/terms/"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SKILL_CLASS = ox.NamedNode(OC + "Skill")
DEP_IRI_PREFIX = OC + "skill_ontoskills_"


def _p(name: str) -> ox.NamedNode:
    return ox.NamedNode((DCTERMS if name == "identifier" else OC) + name)


@dataclass(frozen=True)
class ModuleInfo:
    """The skill node of one module, as the registry tools need it."""

    iri: str
    identifier: str | None
    name: str | None
    description: str | None
    category: str | None
    intents: tuple[str, ...]
    aliases: tuple[str, ...]
    depends_on: tuple[str, ...]  # dependency skill ids (store spelling without prefix)
    extends: str | None  # IRI of the main skill when this is a sub-module
    is_user_invocable: bool | None
    triples: int


def dependency_id(iri: str) -> str:
    """`oc:skill_ontoskills_writing_plans` -> `writing-plans` (the store's convention)."""
    local = iri[len(DEP_IRI_PREFIX) :] if iri.startswith(DEP_IRI_PREFIX) else iri.rsplit("#", 1)[-1]
    return local.replace("_", "-")


def dependency_iri(skill_id: str) -> str:
    return DEP_IRI_PREFIX + skill_id.replace("-", "_").replace(".", "_")


def parse_module(data: bytes, where: str) -> ModuleInfo:
    """Parse Turtle and return its single skill node; FormatError (exit 4) otherwise."""
    try:
        triples = list(ox.parse(data, format=ox.RdfFormat.TURTLE, without_named_graphs=True))
    except (SyntaxError, ValueError) as exc:
        raise FormatError(f"{where}: invalid Turtle ({_first_line(exc)})") from None
    skills = sorted(
        {t.subject.value for t in triples if t.predicate == RDF_TYPE and t.object == SKILL_CLASS}
    )
    if len(skills) != 1:
        found = "no skill node" if not skills else f"{len(skills)} skill nodes"
        raise FormatError(
            f"{where}: expected exactly one `a oc:Skill` node, found {found}",
            hint="each module describes one skill; sub-modules use oc:extends",
        )
    subject = skills[0]
    values: dict[str, list[ox.NamedNode | ox.Literal | ox.BlankNode]] = {}
    for t in triples:
        if t.subject.value == subject and isinstance(t.subject, ox.NamedNode):
            values.setdefault(t.predicate.value, []).append(t.object)

    def texts(name: str) -> tuple[str, ...]:
        return tuple(sorted(o.value for o in values.get(_p(name).value, []) if _is_lit(o)))

    def one(name: str) -> str | None:
        got = texts(name)
        return got[0] if got else None

    def iris(name: str) -> list[str]:
        return sorted(o.value for o in values.get(_p(name).value, []) if _is_iri(o))

    invocable = one("isUserInvocable")
    extends = iris("extends")
    return ModuleInfo(
        iri=subject,
        identifier=one("identifier"),
        name=one("hasName"),
        description=one("hasDescription"),
        category=one("hasCategory"),
        intents=texts("resolvesIntent"),
        aliases=texts("hasAlias"),
        depends_on=tuple(dependency_id(i) for i in iris("dependsOnSkill")),
        extends=extends[0] if extends else None,
        is_user_invocable=None if invocable is None else invocable == "true",
        triples=len(triples),
    )


def _is_lit(o: object) -> bool:
    return isinstance(o, ox.Literal)


def _is_iri(o: object) -> bool:
    return isinstance(o, ox.NamedNode)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
