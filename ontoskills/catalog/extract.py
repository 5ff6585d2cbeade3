"""Bounded extraction of a skill's context from its modules' graphs (issue 13, class 5).

Turtle is a graph, not a tree: a few kilobytes of hostile Turtle can make sections share
subsections (a diamond 20 levels deep is 2^20 paths) or point back at their own ancestors
(oc:hasSubsection / oc:hasContent / oc:hasStep cycles). A naive recursive walk then renders
the same nodes millions of times or never ends. So the walk here:

* expands every section at most once: a section reached again, through a second parent
  (a DAG) or from inside itself (a cycle), is a stub saying where it was shown or that it
  closes a cycle. Sections are the only recursion (blocks, list items and workflow steps are
  leaves), so the walk is linear in the input, except for leaf blocks shared by several
  sections: real skills do that (a workflow is both `oc:hasWorkflow` of the skill and a
  content block of a section, 1,477 times in the public registry), so they are expanded
  wherever they appear and only the budgets bound them;
* stops at a section depth of MAX_DEPTH, a total of MAX_NODES expanded nodes and
  MAX_CHARS characters of literal text (walkbudget.py);
* records every cut in `notes` (shown to humans and models), never silently.

Children are visited in a content-derived order (never the store's iteration order), so the
same Turtle always gives the same context and, downstream, the same part ids.
"""

from __future__ import annotations

import heapq
from typing import Any

import pyoxigraph as ox

from ..asciinum import uint
from ..skillheader import (
    DCTERMS_DESCRIPTION,
    DCTERMS_ID,
    OC,
    RDF_TYPE,
    dependency_id,
    local_name,
)
from .walkbudget import MAX_DEPTH, Budget

SEVERITY_ORDER = {"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "LOW": 3}
BLOCK_TEXT = {  # content block class -> property holding its text
    "Paragraph": "textContent",
    "CodeExample": "codeContent",
    "Table": "tableMarkdown",
    "BlockQuote": "quoteContent",
    "HTMLBlock": "htmlContent",
    "Flowchart": "flowchartSource",
    "FrontmatterBlock": "rawYaml",
}
_LIST_KINDS = ("BulletList", "Workflow")


class Graph:
    """Property access on one module's named graph."""

    def __init__(self, store: ox.Store, graph: ox.NamedNode) -> None:
        self.store, self.graph = store, graph

    def objs(self, node: Any, prop: str) -> list[Any]:
        return [
            q.object
            for q in self.store.quads_for_pattern(node, ox.NamedNode(prop), None, self.graph)
        ]

    def lit(self, node: Any, prop: str, default: str = "") -> str:
        values = sorted(o.value for o in self.objs(node, prop) if isinstance(o, ox.Literal))
        return values[0] if values else default

    def num(self, node: Any, prop: str) -> int | None:
        """A whole-number literal (ASCII digits only: int() would read '١' as 1)."""
        return uint(self.lit(node, OC + prop))

    def types(self, node: Any) -> list[str]:
        return sorted(
            local_name(o.value) for o in self.objs(node, RDF_TYPE) if isinstance(o, ox.NamedNode)
        )


def _kind(types: list[str], generic: str) -> str:
    specific = [t for t in types if t != generic]
    return specific[0] if specific else generic


class Extractor:
    """Walks one module's graph into the JSON shapes of `SkillContext`."""

    def __init__(self, g: Graph, budget: Budget) -> None:
        self.g, self.budget = g, budget
        self.code_examples: list[dict[str, Any]] = []
        self._path: set[Any] = set()

    def _lit(self, node: Any, prop: str) -> str:
        return self.budget.text(self.g.lit(node, prop))

    def _signature(self, node: Any) -> tuple[str, ...]:
        """Content of a node's own literals: a stable tie-break for ordering siblings."""
        return tuple(
            sorted(
                q.object.value
                for q in self.g.store.quads_for_pattern(node, None, None, self.g.graph)
                if isinstance(q.object, ox.Literal)
            )
        )

    def _ordered(
        self, nodes: list[Any], order_prop: str | None, title_prop: str | None
    ) -> list[Any]:
        keyed = [
            (
                (self.g.num(n, order_prop) or 0) if order_prop else 0,
                self.g.lit(n, OC + title_prop) if title_prop else "",
                self._signature(n),
                n,
            )
            for n in dict.fromkeys(nodes)  # the same object listed twice is one child
        ]
        keyed.sort(key=lambda k: k[:3])
        return [k[3] for k in keyed]

    def _visit(self, node: Any, where: str) -> str | None:
        """None when `node` may be expanded now; else why not ('cycle' / the first place)."""
        if node in self._path:
            self.budget.skipped["cycle"] += 1
            return "cycle"
        key = (self.g.graph.value, node)
        first = self.budget.seen.get(key)
        if first is not None:
            self.budget.skipped["shared"] += 1
            return first
        self.budget.seen[key] = where
        return None

    # ---------------------------------------------------------------- sections
    def sections(self, parent: Any, prop: str, depth: int = 0) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        nodes = self._ordered(self.g.objs(parent, OC + prop), "sectionOrder", "sectionTitle")
        for s in self.budget.admit(nodes, "section"):
            title = self._lit(s, OC + "sectionTitle")
            section: dict[str, Any] = {
                "title": title,
                "level": self.g.num(s, "sectionLevel") or 1,
                "order": self.g.num(s, "sectionOrder") or 0,
                "blocks": [],
                "subsections": [],
            }
            out.append(section)
            seen = self._visit(s, title or "an untitled section")
            if seen is not None:
                _mark(section, seen)
                continue
            if depth >= MAX_DEPTH:
                self.budget.skipped["depth"] += 1
                section["cut"] = "nested too deep"
                continue
            self._path.add(s)
            try:
                section["blocks"] = self.blocks(s, title)
                section["subsections"] = self.sections(s, "hasSubsection", depth + 1)
            finally:
                self._path.discard(s)
        return out

    def blocks(self, section: Any, title: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        g = self.g
        nodes = self._ordered(g.objs(section, OC + "hasContent"), "contentOrder", None)
        for node in self.budget.admit(nodes, "block"):
            types = g.types(node)
            kind = next((t for t in types if t in BLOCK_TEXT or t in _LIST_KINDS), "")
            block: dict[str, Any] = {
                "type": kind or (types[0] if types else "Block"),
                "order": g.num(node, "contentOrder") or 0,
            }
            out.append(block)
            if kind == "BulletList":
                block["items"] = self.items(node)
            elif kind == "Workflow":
                block["steps"] = [s["description"] for s in self.steps(node)]
            elif kind:
                block["text"] = self._lit(node, OC + BLOCK_TEXT[kind])
                if kind == "CodeExample":
                    block["language"] = g.lit(node, OC + "codeLanguage")
                    self.code_examples.append(
                        {"section": title, "language": block["language"], "code": block["text"]}
                    )
        return out

    def items(self, bullet_list: Any) -> list[str]:
        out: list[str] = []
        nodes = self._ordered(self.g.objs(bullet_list, OC + "hasItem"), "itemOrder", None)
        for item in self.budget.admit(nodes, "item"):
            out.append(self._lit(item, OC + "itemText"))
        return out

    # ---------------------------------------------------------------- workflows
    def steps(self, workflow: Any) -> list[dict[str, Any]]:
        g = self.g
        nodes = self._ordered(g.objs(workflow, OC + "hasStep"), "stepOrder", None)
        ids: dict[Any, str] = {}
        kept = []
        for n, node in enumerate(self.budget.admit(nodes, "step"), 1):
            ids[node] = g.lit(node, OC + "stepId") or f"step-{n}"
            kept.append(node)
        steps: dict[str, dict[str, Any]] = {}
        for node in kept:
            sid = ids[node]
            steps.setdefault(
                sid,
                {
                    "id": sid,
                    "order": g.num(node, "stepOrder"),
                    "description": self._lit(node, DCTERMS_DESCRIPTION),
                    "expected_outcome": self._lit(node, OC + "expectedOutcome"),
                    "depends_on": sorted(
                        {ids.get(d, local_name(str(d))) for d in g.objs(node, OC + "stepDependsOn")}
                    ),
                },
            )
        return _order_steps(steps)

    # ---------------------------------------------------------------- module
    def module(self, subject: ox.NamedNode) -> dict[str, Any]:
        g = self.g
        requirements = []
        nodes = self._ordered(g.objs(subject, OC + "hasRequirement"), None, None)
        for req in self.budget.admit(nodes, "requirement"):
            requirements.append(
                {
                    "type": _kind(g.types(req), "Requirement").removeprefix("Requirement"),
                    "value": self._lit(req, OC + "requirementValue"),
                    "optional": g.lit(req, OC + "isOptional") == "true",
                }
            )
        knowledge = []
        nodes = self._ordered(g.objs(subject, OC + "impartsKnowledge"), None, None)
        for kn in self.budget.admit(nodes, "knowledge"):
            knowledge.append(
                {
                    "type": _kind(g.types(kn), "KnowledgeNode"),
                    "severity": g.lit(kn, OC + "severityLevel") or None,
                    "directive": self._lit(kn, OC + "directiveContent"),
                    "context": self._lit(kn, OC + "appliesToContext"),
                    "rationale": self._lit(kn, OC + "hasRationale"),
                }
            )
        workflows = []
        nodes = self._ordered(g.objs(subject, OC + "hasWorkflow"), None, None)
        for wf in self.budget.admit(nodes, "workflow"):
            workflows.append(
                {
                    "id": g.lit(wf, OC + "workflowId"),
                    "name": self._lit(wf, OC + "workflowName"),
                    "description": self._lit(wf, DCTERMS_DESCRIPTION),
                    "steps": self.steps(wf),
                }
            )
        return {
            "requirements": sorted(
                requirements, key=lambda r: (r["type"], r["value"], r["optional"])
            ),
            "knowledge": knowledge,
            "workflows": sorted(workflows, key=_workflow_key),
            "sections": self.sections(subject, "hasSection"),
            "dependencies": [
                dependency_id(d.value)
                for d in g.objs(subject, OC + "dependsOnSkill")
                if isinstance(d, ox.NamedNode)
            ],
            "identifier": g.lit(subject, DCTERMS_ID),
            "description": g.lit(subject, OC + "hasDescription"),
        }


def _mark(node: dict[str, Any], seen: str) -> None:
    """A stub for a node not expanded here: a cycle, or shown already under `seen`."""
    if seen == "cycle":
        node["cycle"] = True
    else:
        node["same_as"] = seen


def _workflow_key(wf: dict[str, Any]) -> tuple[str, ...]:
    steps = "\x00".join(s["id"] + "\x01" + s["description"] for s in wf["steps"])
    return (wf["id"], wf["name"], wf["description"], steps)


def _order_steps(steps: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """stepOrder when every step has one; otherwise dependencies first (Kahn), ties by id.

    A heap keeps it O(n log n): a hostile workflow can have thousands of steps.
    """
    if steps and all(s["order"] is not None for s in steps.values()):
        return sorted(steps.values(), key=lambda s: (s["order"], s["id"]))
    waiting = {k: {d for d in s["depends_on"] if d in steps and d != k} for k, s in steps.items()}
    needed_by: dict[str, list[str]] = {}
    for k, deps in waiting.items():
        for d in deps:
            needed_by.setdefault(d, []).append(k)
    ready = [k for k, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order = sorted(steps)  # a cycle is broken at the smallest id still pending
    cursor = 0
    placed: set[str] = set()
    done: list[dict[str, Any]] = []
    while len(done) < len(steps):
        if ready:
            nxt = heapq.heappop(ready)
            if nxt in placed:
                continue
        else:
            while order[cursor] in placed:
                cursor += 1
            nxt = order[cursor]
        placed.add(nxt)
        done.append(steps[nxt])
        for k in needed_by.get(nxt, ()):
            deps = waiting[k]
            deps.discard(nxt)
            if not deps and k not in placed:
                heapq.heappush(ready, k)
    return done


def knowledge_key(k: dict[str, Any]) -> tuple[Any, ...]:
    """Most severe first; the rest of the node breaks ties (stable across runs)."""
    return (
        SEVERITY_ORDER.get(k["severity"] or "", 9),
        k["directive"],
        k["type"],
        k["context"],
        k["rationale"],
    )
