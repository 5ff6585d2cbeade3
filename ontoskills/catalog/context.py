"""Full context of one skill, parsed from its Turtle on demand.

All of a skill's modules go into one in-memory pyoxigraph store, one named graph per module
(quirk 11: node names collide across files), blank nodes renamed per file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from ..errors import FormatError
from .model import SkillRecord
from .turtle import DCTERMS_ID, OC, RDF_TYPE, local_name

DC_DESC = "http://purl.org/dc/terms/description"
SEVERITY_ORDER = {"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "LOW": 3}
_BLOCK_TEXT = {  # content block class -> property holding its text
    "Paragraph": "textContent",
    "CodeExample": "codeContent",
    "Table": "tableMarkdown",
    "BlockQuote": "quoteContent",
    "HTMLBlock": "htmlContent",
    "Flowchart": "flowchartSource",
    "FrontmatterBlock": "rawYaml",
}


class _Graph:
    """Property access on one module's named graph."""

    def __init__(self, store: ox.Store, graph: ox.NamedNode) -> None:
        self.store, self.graph = store, graph

    def objs(self, node: ox.NamedNode | ox.BlankNode, prop: str) -> list[Any]:
        return [
            q.object
            for q in self.store.quads_for_pattern(node, ox.NamedNode(prop), None, self.graph)
        ]

    def lit(self, node: Any, prop: str, default: str = "") -> str:
        values = sorted(o.value for o in self.objs(node, prop) if isinstance(o, ox.Literal))
        return values[0] if values else default

    def num(self, node: Any, prop: str) -> int | None:
        try:
            return int(self.lit(node, OC + prop))
        except ValueError:
            return None

    def types(self, node: Any) -> list[str]:
        return sorted(
            local_name(o.value) for o in self.objs(node, RDF_TYPE) if isinstance(o, ox.NamedNode)
        )


def dependency_id(iri: str) -> str:
    """oc:skill_ontoskills_writing_plans -> writing-plans (how the compiler names targets)."""
    name = local_name(iri)
    for prefix in ("skill_ontoskills_", "skill_"):
        name = name.removeprefix(prefix)
    return name.replace("_", "-")


def _kind(types: list[str], generic: str) -> str:
    specific = [t for t in types if t != generic]
    return specific[0] if specific else generic


@dataclass
class SkillContext:
    key: str
    record: SkillRecord
    requirements: list[dict[str, Any]] = field(default_factory=list)
    knowledge: list[dict[str, Any]] = field(default_factory=list)
    workflows: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    code_examples: list[dict[str, Any]] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    modules: list[dict[str, str]] = field(default_factory=list)
    turtle_dependencies: list[str] = field(default_factory=list)

    # ---------------------------------------------------------------- output
    def paths(self) -> dict[str, list[str]]:
        root = Path(self.record.root)
        assets = [str(root.joinpath(*p.split("/"))) for p in self.record.assets]
        scripts = [
            a
            for a, rel in zip(assets, self.record.assets, strict=True)
            if "/scripts/" in f"/{rel}" or os.access(a, os.X_OK)
        ]
        return {"assets": assets, "scripts": scripts}

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "skill": self.key,
            "name": r.name,
            "identifier": r.identifier,
            "iri": r.iri,
            "trust_tier": r.trust_tier,
            "description": r.description,
            "category": r.category,
            "nature": r.nature,
            "aliases": r.aliases,
            "intents": r.intents,
            "requirements": self.requirements,
            "knowledge": self.knowledge,
            "workflows": self.workflows,
            "sections": self.sections,
            "code_examples": self.code_examples,
            "dependencies": self.dependencies,
            "modules": self.modules,
            "path": str(Path(r.root).joinpath(*r.main_module.split("/")).parent),
            **self.paths(),
        }

    def render(self) -> str:
        from .render import render_context

        return render_context(self)


# -------------------------------------------------------------------- extraction


def _blocks(g: _Graph, section: Any, ctx: SkillContext, title: str) -> list[dict[str, Any]]:
    out = []
    for node in g.objs(section, OC + "hasContent"):
        types = g.types(node)
        order = g.num(node, "contentOrder") or 0
        kind = next((t for t in types if t in _BLOCK_TEXT or t in ("BulletList", "Workflow")), "")
        block: dict[str, Any] = {"type": kind or (types[0] if types else "Block"), "order": order}
        if kind == "BulletList":
            items = sorted(
                (
                    (g.num(i, "itemOrder") or 0, g.lit(i, OC + "itemText"))
                    for i in g.objs(node, OC + "hasItem")
                ),
            )
            block["items"] = [text for _, text in items]
        elif kind == "Workflow":
            block["steps"] = [s["description"] for s in _steps(g, node)]
        elif kind:
            block["text"] = g.lit(node, OC + _BLOCK_TEXT[kind])
            if kind == "CodeExample":
                block["language"] = g.lit(node, OC + "codeLanguage")
                ctx.code_examples.append(
                    {"section": title, "language": block["language"], "code": block["text"]}
                )
        out.append(block)
    return sorted(out, key=lambda b: b["order"])


def _sections(g: _Graph, node: Any, prop: str, ctx: SkillContext) -> list[dict[str, Any]]:
    out = []
    for s in g.objs(node, OC + prop):
        title = g.lit(s, OC + "sectionTitle")
        out.append(
            {
                "title": title,
                "level": g.num(s, "sectionLevel") or 1,
                "order": g.num(s, "sectionOrder") or 0,
                "blocks": _blocks(g, s, ctx, title),
                "subsections": _sections(g, s, "hasSubsection", ctx),
            }
        )
    return sorted(out, key=lambda s: (s["order"], s["title"]))


def _steps(g: _Graph, workflow: Any) -> list[dict[str, Any]]:
    raw = []
    ids: dict[Any, str] = {}
    for node in g.objs(workflow, OC + "hasStep"):
        sid = g.lit(node, OC + "stepId") or str(node)
        ids[node] = sid
        raw.append((node, sid))
    steps = {}
    for node, sid in raw:
        steps[sid] = {
            "id": sid,
            "order": g.num(node, "stepOrder"),
            "description": g.lit(node, DC_DESC),
            "expected_outcome": g.lit(node, OC + "expectedOutcome"),
            "depends_on": sorted(
                ids.get(d, local_name(str(d))) for d in g.objs(node, OC + "stepDependsOn")
            ),
        }
    # stepOrder when given; otherwise dependencies first (Kahn), ties by id.
    if steps and all(s["order"] is not None for s in steps.values()):
        return sorted(steps.values(), key=lambda s: (s["order"], s["id"]))
    done: list[dict[str, Any]] = []
    placed: set[str] = set()
    pending = dict(sorted(steps.items()))
    while pending:
        ready = [
            k
            for k, s in pending.items()
            if all(d in placed or d not in steps for d in s["depends_on"])
        ]
        nxt = ready[0] if ready else next(iter(pending))  # a cycle: break it deterministically
        placed.add(nxt)
        done.append(pending.pop(nxt))
    return done


def _module(g: _Graph, subject: ox.NamedNode, ctx: SkillContext, is_main: bool) -> None:
    for req in g.objs(subject, OC + "hasRequirement"):
        ctx.requirements.append(
            {
                "type": _kind(g.types(req), "Requirement").removeprefix("Requirement"),
                "value": g.lit(req, OC + "requirementValue"),
                "optional": g.lit(req, OC + "isOptional") == "true",
            }
        )
    for kn in g.objs(subject, OC + "impartsKnowledge"):
        ctx.knowledge.append(
            {
                "type": _kind(g.types(kn), "KnowledgeNode"),
                "severity": g.lit(kn, OC + "severityLevel") or None,
                "directive": g.lit(kn, OC + "directiveContent"),
                "context": g.lit(kn, OC + "appliesToContext"),
                "rationale": g.lit(kn, OC + "hasRationale"),
            }
        )
    for wf in g.objs(subject, OC + "hasWorkflow"):
        ctx.workflows.append(
            {
                "id": g.lit(wf, OC + "workflowId"),
                "name": g.lit(wf, OC + "workflowName"),
                "description": g.lit(wf, DC_DESC),
                "steps": _steps(g, wf),
            }
        )
    sections = _sections(g, subject, "hasSection", ctx)
    if not is_main:
        ident = g.lit(subject, DCTERMS_ID)
        for s in sections:
            s["module"] = ident
    ctx.sections.extend(sections)
    for dep in g.objs(subject, OC + "dependsOnSkill"):
        if isinstance(dep, ox.NamedNode):
            ctx.turtle_dependencies.append(dependency_id(dep.value))


def load_context(record: SkillRecord) -> SkillContext:
    store = ox.Store()
    ctx = SkillContext(key=record.key, record=record)
    root = Path(record.root)
    subjects: list[tuple[str, ox.NamedNode, ox.NamedNode]] = []
    for rel in record.modules:
        path = root.joinpath(*rel.split("/"))
        graph = ox.NamedNode(path.as_uri())
        try:
            quads = ox.parse(
                path=str(path),
                format=ox.RdfFormat.TURTLE,
                without_named_graphs=True,
                rename_blank_nodes=True,
            )
            store.bulk_extend(ox.Quad(q.subject, q.predicate, q.object, graph) for q in quads)
        except (OSError, SyntaxError, ValueError) as exc:
            raise FormatError(f"{record.key}: cannot read {rel}: {exc}") from None
        skill = next(
            (
                q.subject
                for q in store.quads_for_pattern(
                    None, ox.NamedNode(RDF_TYPE), ox.NamedNode(OC + "Skill"), graph
                )
                if isinstance(q.subject, ox.NamedNode)
            ),
            None,
        )
        if skill is not None:
            subjects.append((rel, skill, graph))
    for rel, subject, graph in subjects:
        g = _Graph(store, graph)
        _module(g, subject, ctx, rel == record.main_module)
        if rel != record.main_module:
            ctx.modules.append(
                {
                    "path": rel,
                    "identifier": g.lit(subject, DCTERMS_ID),
                    "description": g.lit(subject, OC + "hasDescription"),
                }
            )
    ctx.knowledge.sort(key=lambda k: (SEVERITY_ORDER.get(k["severity"] or "", 9), k["directive"]))
    # The manifest's list wins; Turtle fills in where it is missing (quirk 7: skillsbench).
    turtle = [d for d in ctx.turtle_dependencies if d != record.skill_id]
    ctx.dependencies = list(dict.fromkeys(record.depends_on or turtle))
    return ctx
