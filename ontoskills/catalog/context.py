"""Full context of one skill, parsed from its Turtle on demand.

All of a skill's modules go into one in-memory pyoxigraph store, one named graph per module
(quirk 11: node names collide across files), blank nodes renamed per file. The walk over the
graphs is bounded (extract.py): what a budget or a cycle cut is listed in `notes`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from ..errors import FormatError
from ..skillheader import skill_node
from .extract import Extractor, Graph, knowledge_key
from .model import SkillRecord
from .walkbudget import Budget


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
    # What the bounded extraction cut or folded (cycles, shared nodes, budgets): said, never
    # silent. Empty for every skill of the public registry.
    notes: list[str] = field(default_factory=list)

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
            "notes": self.notes,
        }

    def render(self) -> str:
        from .render import render_context

        return render_context(self)


def load_context(record: SkillRecord) -> SkillContext:
    store = ox.Store()
    ctx = SkillContext(key=record.key, record=record)
    root = Path(record.root)
    subjects: list[tuple[str, ox.NamedNode, ox.NamedNode]] = []
    for rel in record.modules:
        path = root.joinpath(*rel.split("/"))
        graph = ox.NamedNode(path.as_uri())
        try:
            quads = list(
                ox.parse(
                    path=str(path),
                    format=ox.RdfFormat.TURTLE,
                    without_named_graphs=True,
                    rename_blank_nodes=True,
                )
            )
        except (OSError, SyntaxError, ValueError) as exc:
            raise FormatError(f"{record.key}: cannot read {rel}: {exc}") from None
        store.bulk_extend(ox.Quad(q.subject, q.predicate, q.object, graph) for q in quads)
        skill = skill_node(quads)  # the node the catalog indexed, by the same rule
        if skill is not None:
            subjects.append((rel, skill, graph))
    budget = Budget()
    for rel, subject, graph in subjects:
        ex = Extractor(Graph(store, graph), budget)
        part = ex.module(subject)
        ctx.requirements.extend(part["requirements"])
        ctx.knowledge.extend(part["knowledge"])
        ctx.workflows.extend(part["workflows"])
        if rel != record.main_module:
            for s in part["sections"]:
                s["module"] = part["identifier"]
        ctx.sections.extend(part["sections"])
        ctx.code_examples.extend(ex.code_examples)
        ctx.turtle_dependencies.extend(part["dependencies"])
        if rel != record.main_module:
            ctx.modules.append(
                {"path": rel, "identifier": part["identifier"], "description": part["description"]}
            )
    ctx.knowledge.sort(key=knowledge_key)
    ctx.notes = budget.notes()
    # The manifest's list wins; Turtle fills in where it is missing (quirk 7: skillsbench).
    turtle = [d for d in ctx.turtle_dependencies if d != record.skill_id]
    ctx.dependencies = list(dict.fromkeys(record.depends_on or turtle))
    return ctx
