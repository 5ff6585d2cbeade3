"""The one reader of Turtle modules (skillheader.py): which node is the skill, and what is read
from it, for every caller.

Before issue 14 item 3 the catalog, `pack`/`publish`, intent vectors and the context walk each
decided on their own; the cross-caller tests below failed on that code (the catalog took the
first node in document order, vectors the smallest IRI or any subject with an identifier, the
context walk whatever the store listed first; `pack` kept whitespace and read `oc:skill_pdf`
as the dependency `skill-pdf`; a triple term under `rdf:type` crashed the catalog build).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from ontoskills.embeddings.vectors import read_module
from ontoskills.errors import FormatError
from ontoskills.skillheader import (
    OC,
    dependency_id,
    dependency_iri,
    read_skill_header,
    skill_node,
)
from tests.helpers.skills import service

PREFIXES = f"@prefix dcterms: <http://purl.org/dc/terms/> .\n@prefix oc: <{OC}> .\n"
# Two skill nodes, the larger IRI first in the document: the catalog used to take `zzz`,
# vectors `aaa`.
TWO_SKILLS = PREFIXES + (
    'oc:skill_zzz a oc:Skill ; dcterms:identifier "zzz" ; oc:resolvesIntent "rotate the logs" ;\n'
    "  oc:impartsKnowledge oc:k_zzz .\n"
    'oc:k_zzz a oc:KnowledgeNode ; oc:directiveContent "Rule from zzz" .\n'
    'oc:skill_aaa a oc:Skill ; dcterms:identifier "aaa" ; oc:resolvesIntent "prune the cache" ;\n'
    "  oc:impartsKnowledge oc:k_aaa .\n"
    'oc:k_aaa a oc:KnowledgeNode ; oc:directiveContent "Rule from aaa" .\n'
)


def _read(text: str, *, lenient: bool = True) -> object:
    return read_skill_header(text.encode(), "m.ttl", lenient=lenient)


def test_one_skill_node_is_read_whitespace_stripped_literals_and_iris() -> None:
    head = read_skill_header(
        (
            PREFIXES + 'oc:skill_x a oc:Skill ; dcterms:identifier " x " ; oc:hasName "X" ;\n'
            '  oc:hasDescription "Does x. " ; oc:hasCategory "dev" ; oc:nature "tool" ;\n'
            '  oc:hasAlias "ex", "ex", " " ; oc:resolvesIntent "b", "a" ;\n'
            "  oc:extends oc:skill_z, oc:skill_y ; oc:dependsOnSkill oc:skill_ontoskills_w ;\n"
            '  oc:isUserInvocable "true" ; oc:contentHash "h" ; oc:differentia "that does x" ;\n'
            "  oc:hasCategory oc:NotALiteral .\n"
        ).encode(),
        "x.ttl",
        lenient=False,
    )
    assert (head.iri, head.identifier, head.name) == (OC + "skill_x", "x", "X")
    assert (head.description, head.category, head.nature) == ("Does x.", "dev", "tool")
    assert (head.aliases, head.intents) == (["ex"], ["a", "b"])
    assert head.extends == OC + "skill_y"  # several: the smallest, as every reader did
    assert head.depends_on == [OC + "skill_ontoskills_w"]
    assert head.is_user_invocable is True and head.content_hash == "h"
    assert head.differentia == "that does x" and head.triples == 18


def test_several_skill_nodes_lenient_picks_identifier_then_smallest_iri() -> None:
    head = _read(TWO_SKILLS)
    assert head is not None and head.identifier == "aaa"  # type: ignore[attr-defined]
    only_one_named = PREFIXES + (
        "oc:skill_a a oc:Skill .\n"  # smallest IRI, but no identifier
        'oc:skill_b a oc:Skill ; dcterms:identifier "b" .\n'
    )
    assert _read(only_one_named).iri == OC + "skill_b"  # type: ignore[union-attr]
    with pytest.raises(FormatError, match="expected exactly one `a oc:Skill` node, found 2"):
        _read(TWO_SKILLS, lenient=False)


def test_no_skill_node_is_none_or_refused() -> None:
    """Vectors used to take any subject with a dcterms:identifier as the skill."""
    text = PREFIXES + 'oc:thing dcterms:identifier "thing" ; oc:resolvesIntent "x" .\n'
    assert _read(text) is None
    with pytest.raises(FormatError, match="found no skill node"):
        _read(text, lenient=False)
    blank = PREFIXES + '[] a oc:Skill ; dcterms:identifier "anon" .\n'
    assert _read(blank) is None
    with pytest.raises(FormatError, match="blank node"):
        _read(blank, lenient=False)


def test_syntax_is_strict_for_every_caller(tmp_path: Path) -> None:
    """An IRI with a space parses in pyoxigraph's lenient mode, which vectors used."""
    text = PREFIXES + '<http://a b> a oc:Skill ; dcterms:identifier "spaced" .\n'
    with pytest.raises(FormatError, match="invalid Turtle"):
        _read(text)
    path = tmp_path / "m.ttl"
    path.write_text(text)
    assert read_module(path, "m.ttl") is None


def test_a_triple_term_under_rdf_type_does_not_crash_the_reader() -> None:
    """RDF 1.2 Turtle parses `<<( s p o )>>`: a Triple has no `.value`. The catalog's schema
    counters read `q.object.value` for every rdf:type and raised AttributeError."""
    text = PREFIXES + (
        'oc:skill_x a oc:Skill ; dcterms:identifier "x" .\noc:skill_x a <<( oc:a oc:b oc:c )>> .\n'
    )
    usage: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
    head = read_skill_header(text.encode(), "m.ttl", lenient=True, usage=usage)
    assert head is not None and head.identifier == "x"
    assert usage[0] == Counter({OC + "Skill": 1})


def test_dependency_ids_one_rule_both_ways() -> None:
    assert dependency_id(dependency_iri("writing-plans")) == "writing-plans"
    assert dependency_id(OC + "skill_ontoskills_writing_plans") == "writing-plans"
    assert dependency_id(OC + "skill_pdf") == "pdf"  # pack said `skill-pdf`
    assert dependency_id("https://example.org/skills/pdf") == "pdf"


def test_catalog_context_and_vectors_read_the_same_skill(env: dict[str, str]) -> None:
    """One module with two skill nodes, served as a local skill: the catalog's record, the
    context walk and the intent vectors all take `aaa`."""
    home = Path(env["ONTOSKILLS_HOME"])
    folder = home / "ontologies/mine/two"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(TWO_SKILLS)
    svc = service(env)
    assert svc.problems == []
    (summary,) = svc.skills()
    assert summary.key == "local/mine/aaa"
    record = svc.state.data.records[0]
    assert (record.iri, record.intents) == (OC + "skill_aaa", ["prune the cache"])
    ctx = svc.context("local/mine/aaa")
    assert [k["directive"] for k in ctx.knowledge] == ["Rule from aaa"]
    info = read_module(folder / "ontoskill.ttl", "ontoskill.ttl")
    assert info is not None and (info.identifier, info.intents) == ("aaa", ("prune the cache",))
    quads = list(ox.parse(TWO_SKILLS.encode(), format=ox.RdfFormat.TURTLE))
    assert skill_node(quads) == ox.NamedNode(OC + "skill_aaa")


def test_catalog_serves_a_module_with_a_triple_term(env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    folder = home / "ontologies/mine/odd"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(
        PREFIXES + 'oc:skill_odd a oc:Skill ; dcterms:identifier "odd" ;\n'
        '  oc:resolvesIntent "read an odd module" .\n'
        "oc:skill_odd a <<( oc:a oc:b oc:c )>> .\n"
    )
    svc = service(env)
    top = svc.search("odd module", mode="bm25").results[0]
    assert top.skill == "local/mine/odd"
