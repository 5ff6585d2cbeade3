"""Skill bodies with real content (sections, knowledge, workflows, code) as Turtle, in the
compiler's vocabulary, for context tests: sized as a test needs, from small to hostile.

`body(subject, ...)` returns triples to append to a skill module (SkillSpec.body), where
`subject` is the skill's IRI in `oc:` form. Every node is named (`oc:<prefix>nN`), so tests
can also write graphs that share or loop on purpose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tests.helpers.registry import OC, PackageSpec, SkillSpec, iri_name


def lit(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@dataclass
class Sec:
    title: str
    blocks: list[tuple[str, ...]] = field(default_factory=list)  # ("p", text) ("code", lang, src)
    subs: list[Sec] = field(default_factory=list)  # ("list", item, item...) ("table", md)
    level: int = 1


@dataclass
class Rich:
    knowledge: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    # (severity or "", type, directive, context, rationale)
    workflows: list[tuple[str, str, list[tuple[str, str, str]]]] = field(default_factory=list)
    # (id, name, [(step id, description, expected outcome)])
    sections: list[Sec] = field(default_factory=list)
    requirements: list[tuple[str, str]] = field(default_factory=list)  # (type, value)


class _Writer:
    def __init__(self, prefix: str) -> None:
        self.prefix, self.n, self.out = prefix, 0, []  # type: ignore[var-annotated]

    def node(self) -> str:
        self.n += 1
        return f"oc:{self.prefix}n{self.n}"

    def triples(self, subject: str, pairs: list[tuple[str, str]]) -> None:
        body = " ;\n    ".join(f"{p} {o}" for p, o in pairs)
        self.out.append(f"{subject} {body} .")

    def section(self, s: Sec, order: int) -> str:
        me = self.node()
        pairs = [
            ("a", "oc:Section"),
            ("oc:sectionTitle", lit(s.title)),
            ("oc:sectionLevel", str(s.level)),
            ("oc:sectionOrder", str(order)),
        ]
        for n, b in enumerate(s.blocks, 1):
            pairs.append(("oc:hasContent", self.block(b, n)))
        for n, sub in enumerate(s.subs, 1):
            pairs.append(("oc:hasSubsection", self.section(sub, n)))
        self.triples(me, pairs)
        return me

    def block(self, b: tuple[str, ...], order: int) -> str:
        me = self.node()
        kind = b[0]
        pairs = [("oc:contentOrder", str(order))]
        if kind == "p":
            pairs += [("a", "oc:Paragraph"), ("oc:textContent", lit(b[1]))]
        elif kind == "code":
            pairs += [("a", "oc:CodeExample"), ("oc:codeLanguage", lit(b[1]))]
            pairs.append(("oc:codeContent", lit(b[2])))
        elif kind == "table":
            pairs += [("a", "oc:Table"), ("oc:tableMarkdown", lit(b[1]))]
        elif kind == "list":
            pairs.append(("a", "oc:BulletList"))
            for n, text in enumerate(b[1:], 1):
                item = self.node()
                self.triples(
                    item,
                    [("a", "oc:BulletItem"), ("oc:itemOrder", str(n)), ("oc:itemText", lit(text))],
                )
                pairs.append(("oc:hasItem", item))
        else:
            raise ValueError(kind)
        self.triples(me, pairs)
        return me


def body(subject: str, rich: Rich, prefix: str = "") -> str:
    w = _Writer(prefix)
    pairs: list[tuple[str, str]] = []
    for sev, kind, directive, context, rationale in rich.knowledge:
        k = w.node()
        kp = [("a", f"oc:{kind}"), ("oc:directiveContent", lit(directive))]
        if sev:
            kp.append(("oc:severityLevel", lit(sev)))
        if context:
            kp.append(("oc:appliesToContext", lit(context)))
        if rationale:
            kp.append(("oc:hasRationale", lit(rationale)))
        w.triples(k, kp)
        pairs.append(("oc:impartsKnowledge", k))
    for wid, name, steps in rich.workflows:
        wf = w.node()
        wp = [("a", "oc:Workflow"), ("oc:workflowId", lit(wid)), ("oc:workflowName", lit(name))]
        for n, (sid, desc, outcome) in enumerate(steps, 1):
            st = w.node()
            sp = [("a", "oc:WorkflowStep"), ("oc:stepId", lit(sid)), ("oc:stepOrder", str(n))]
            sp.append(("<http://purl.org/dc/terms/description>", lit(desc)))
            if outcome:
                sp.append(("oc:expectedOutcome", lit(outcome)))
            w.triples(st, sp)
            wp.append(("oc:hasStep", st))
        w.triples(wf, wp)
        pairs.append(("oc:hasWorkflow", wf))
    for kind, value in rich.requirements:
        r = w.node()
        w.triples(r, [("a", f"oc:Requirement{kind}"), ("oc:requirementValue", lit(value))])
        pairs.append(("oc:hasRequirement", r))
    for n, s in enumerate(rich.sections, 1):
        pairs.append(("oc:hasSection", w.section(s, n)))
    if pairs:
        w.triples(subject, pairs)
    return "\n".join(w.out) + "\n"


def words(n: int, seed: str = "w") -> str:
    """`n` distinct-looking words (no two pages of a long text alike)."""
    return " ".join(f"{seed}{i}" for i in range(n))


def sample_rich() -> Rich:
    """A skill shaped like a real one, large enough to need an overview and pages."""
    big_section = Sec(
        "Reference",
        [("p", "Everything about the API, topic by topic.")],
        [
            Sec(
                f"Topic {t}: {['parsing', 'writing', 'forms', 'merging'][t % 4]}",
                [
                    ("p", f"Topic {t} explained. " + words(300, f"t{t}x")),
                    ("code", "python", f"def topic_{t}():\n    return {t}\n" * 20),
                    ("list", *[f"topic {t} point {i}" for i in range(8)]),
                ],
                level=3,
            )
            for t in range(12)
        ],
        level=2,
    )
    return Rich(
        knowledge=[
            (
                ["CRITICAL", "HIGH", "MEDIUM", "LOW", ""][i % 5],
                ["Constraint", "AntiPattern", "BestPractice"][i % 3],
                f"Rule {i}: always check the page count before writing page {i}.",
                f"when handling document {i}",
                f"because page {i} may not exist",
            )
            for i in range(60)
        ],
        workflows=[
            (
                "fill-form",
                "Fill a PDF form",
                [(f"s{i}", f"Step {i} of filling the form", f"field {i} is set") for i in range(9)],
            ),
            ("merge", "Merge PDFs", [("m1", "Open both files", ""), ("m2", "Append pages", "")]),
        ],
        requirements=[("Tool", "qpdf"), ("Package", "pypdf")],
        sections=[
            Sec(
                "PDF processing",
                [("p", "How to work with PDFs."), ("table", "| a | b |\n|---|---|\n| 1 | 2 |")],
                [
                    Sec("Quick Reference", [("list", "open", "read", "write")], level=2),
                    big_section,
                    Sec("Pitfalls", [("p", "Never trust page numbers in the outline.")], level=2),
                ],
            )
        ],
    )


def rich_package(rich: Rich, skill: str = "pdf", package: str = "acme/docs") -> PackageSpec:
    author, pkg = package.split("/")
    subject = f"oc:{iri_name(author, pkg, skill)}"
    return PackageSpec(
        id=package,
        skills=[
            SkillSpec(
                skill,
                "Create, fill and merge PDF documents",
                intents=("fill a pdf form", "merge pdf files"),
                body=body(subject, rich),
            )
        ],
    )


__all__ = ["OC", "Rich", "Sec", "body", "lit", "rich_package", "sample_rich", "words"]
