"""Issue 13, class 5: context extraction from hostile Turtle is bounded and says what it cut.

A few kilobytes whose sections share subsections (a diamond 20 levels deep is 2^20 paths) or
loop back on themselves must neither recurse forever nor render megabytes; huge but honest
content (10k-item lists, a 5 MB literal) is kept whole within the budgets.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from ontoskills.catalog import walkbudget
from ontoskills.catalog.context import SkillContext, load_context
from ontoskills.catalog.disclosure import Disclosure
from ontoskills.catalog.model import SkillRecord
from tests.conftest import CliRunner
from tests.helpers.registry import OC, PackageSpec, SkillSpec, build_registry
from tests.helpers.richskill import lit


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


HEAD = f"""@prefix oc: <{OC}> .
@prefix dcterms: <http://purl.org/dc/terms/> .
oc:skill_x a oc:Skill ; dcterms:identifier "x" ; oc:hasDescription "hostile" .
"""


def load(tmp_path: Path, turtle: str) -> SkillContext:
    folder = tmp_path / "skill"
    folder.mkdir(exist_ok=True)
    (folder / "ontoskill.ttl").write_text(HEAD + turtle, encoding="utf-8")
    record = SkillRecord(
        key="local/skill/x",
        package="local/skill",
        skill_id="x",
        identifier="x",
        iri=OC + "skill_x",
        trust_tier="local",
        root=str(folder),
        main_module="ontoskill.ttl",
        modules=["ontoskill.ttl"],
    )
    return load_context(record)


def sizes(ctx: SkillContext) -> int:
    return len(ctx.render()) + len(json.dumps(ctx.to_json()))


def section(name: str, title: str, subs: list[str], extra: str = "") -> str:
    links = (" ; oc:hasSubsection " + ", ".join(f"oc:{s}" for s in subs)) if subs else ""
    return f"oc:{name} a oc:Section ; oc:sectionTitle {lit(title)}{links}{extra} .\n"


def test_diamond_twenty_levels_deep_is_linear_not_exponential(tmp_path: Path) -> None:
    # Level i has two sections, both holding both sections of level i+1: 2^20 paths.
    ttl = ["oc:skill_x oc:hasSection oc:a0, oc:b0 .\n"]
    for i in range(20):
        nxt = [f"a{i + 1}", f"b{i + 1}"]
        ttl.append(section(f"a{i}", f"A{i}", nxt))
        ttl.append(section(f"b{i}", f"B{i}", nxt))
    ttl.append(
        section(
            "a20", "A20", [], ' ; oc:hasContent oc:p .\noc:p a oc:Paragraph ; oc:textContent "leaf"'
        )
    )
    ttl.append(section("b20", "B20", []))
    source = "".join(ttl)
    assert len(source) < 4_000  # the "3 KB module"

    tracemalloc.start()
    ctx = load(tmp_path, source)
    render_size = sizes(ctx)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    assert render_size < 20_000, render_size  # not megabytes: each section once
    assert peak < 50_000_000, peak
    text = ctx.render()
    for i in range(21):
        assert f"A{i}" in text and f"B{i}" in text
    assert text.count("leaf") == 1
    assert any("more than one parent" in n for n in ctx.notes), ctx.notes
    assert "shown there" in text  # the second place says where the section is


def test_cycles_through_subsections_end_and_are_reported(tmp_path: Path) -> None:
    ttl = (
        "oc:skill_x oc:hasSection oc:s1 .\n"
        + section("s1", "One", ["s2", "s1"])  # a self-loop and a longer loop
        + section("s2", "Two", ["s3"])
        + section("s3", "Three", ["s1"], " ; oc:hasContent oc:s2")  # a section as a block
    )
    ctx = load(tmp_path, ttl)
    text = ctx.render()
    assert "One" in text and "Two" in text and "Three" in text
    assert any("cycle" in n for n in ctx.notes), ctx.notes
    assert "contains itself" in text
    Disclosure(ctx, 2_000).overview()  # and the parts model copes with the stubs


def test_step_dependency_cycle_in_a_10k_step_workflow(tmp_path: Path) -> None:
    n = 10_000
    steps = [
        f'oc:st{i} a oc:WorkflowStep ; oc:stepId "s{i}" ; '
        f'<http://purl.org/dc/terms/description> "do {i}" ; '
        f"oc:stepDependsOn oc:st{(i + 1) % n} .\n"  # one big cycle, no stepOrder
        for i in range(n)
    ]
    links = ", ".join(f"oc:st{i}" for i in range(n))
    ttl = (
        'oc:skill_x oc:hasWorkflow oc:wf .\noc:wf a oc:Workflow ; oc:workflowId "big" ; '
        f"oc:hasStep {links} .\n" + "".join(steps)
    )
    ctx = load(tmp_path, ttl)
    assert len(ctx.workflows[0]["steps"]) == n
    assert len({s["id"] for s in ctx.workflows[0]["steps"]}) == n


def test_ten_thousand_item_list_is_kept_whole(tmp_path: Path) -> None:
    items = "".join(
        f'oc:i{i} a oc:BulletItem ; oc:itemOrder {i} ; oc:itemText "item {i}" .\n'
        for i in range(10_000)
    )
    links = ", ".join(f"oc:i{i}" for i in range(10_000))
    ttl = (
        "oc:skill_x oc:hasSection oc:s .\n"
        + section("s", "List", [], " ; oc:hasContent oc:l")
        + f"oc:l a oc:BulletList ; oc:hasItem {links} .\n"
        + items
    )
    ctx = load(tmp_path, ttl)
    assert ctx.sections[0]["blocks"][0]["items"] == [f"item {i}" for i in range(10_000)]
    assert ctx.notes == []


def test_a_5_mb_literal_is_kept_and_one_shared_by_many_blocks_hits_the_output_budget(
    tmp_path: Path,
) -> None:
    big = "x" * 5_000_000
    ctx = load(
        tmp_path,
        "oc:skill_x oc:hasSection oc:s .\n"
        + section("s", "Big", [], " ; oc:hasContent oc:p")
        + f"oc:p a oc:Paragraph ; oc:textContent {lit(big)} .\n",
    )
    assert ctx.sections[0]["blocks"][0]["text"] == big
    assert ctx.notes == []

    # The same 5 MB paragraph in 40 sections would be 200 MB of output: cut, and said.
    many = "".join(section(f"s{i}", f"S{i}", [], " ; oc:hasContent oc:p") for i in range(40))
    links = ", ".join(f"oc:s{i}" for i in range(40))
    ctx = load(
        tmp_path,
        f"oc:skill_x oc:hasSection {links} .\n"
        + many
        + f"oc:p a oc:Paragraph ; oc:textContent {lit(big)} .\n",
    )
    total = sum(len(b.get("text", "")) for s in ctx.sections for b in s["blocks"])
    assert total <= walkbudget.MAX_CHARS
    assert any("output limit" in n for n in ctx.notes), ctx.notes
    assert any("further node" in n for n in ctx.notes), ctx.notes


def test_node_and_depth_budgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chain = "".join(section(f"d{i}", f"D{i}", [f"d{i + 1}"]) for i in range(100))
    ctx = load(tmp_path, "oc:skill_x oc:hasSection oc:d0 .\n" + chain + section("d100", "D100", []))
    assert any(f"deeper than {walkbudget.MAX_DEPTH}" in n for n in ctx.notes), ctx.notes
    assert "D31" in ctx.render() and "D40" not in ctx.render()

    monkeypatch.setattr(walkbudget, "MAX_NODES", 500)
    kn = "".join(
        f'oc:k{i} a oc:Constraint ; oc:directiveContent "rule {i}" .\n' for i in range(2_000)
    )
    links = ", ".join(f"oc:k{i}" for i in range(2_000))
    ctx = load(tmp_path, f"oc:skill_x oc:impartsKnowledge {links} .\n" + kn)
    assert len(ctx.knowledge) == 500
    assert any("1,500 further node(s) were not loaded" in n for n in ctx.notes), ctx.notes
    assert "note: the skill is larger than the context limit" in ctx.render()


def test_hostile_package_through_cli_and_overview(cli: CliRunner, tmp_path: Path) -> None:
    """End to end: installed by the real CLI, `show` answers and says what it cut."""
    ttl = ["oc:skill_acme_bad_x oc:hasSection oc:a0, oc:b0 .\n"]
    for i in range(18):
        nxt = [f"a{i + 1}", f"b{i + 1}"]
        ttl.append(section(f"a{i}", f"A{i}", nxt))
        ttl.append(section(f"b{i}", f"B{i}", nxt))
    ttl.append(section("a18", "A18", ["a0"]))  # and a cycle back to the top
    ttl.append(section("b18", "B18", []))
    spec = PackageSpec(id="acme/bad", skills=[SkillSpec("x", "hostile", body="".join(ttl))])
    registry = build_registry(tmp_path / "reg", [spec])
    cli("--registry", str(registry), "install", "acme/bad", check=True)
    shown = cli("show", "acme/bad/x", "--json", check=True)
    doc = json.loads(shown.stdout)
    assert len(shown.stdout) < 100_000
    assert any("cycle" in n for n in doc["notes"]) and any("parent" in n for n in doc["notes"])
    text = cli("show", "acme/bad/x", check=True).stdout
    assert "note: " in text
