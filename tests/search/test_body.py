"""What a skill says (its Turtle body) is searchable, weighted below its header; the body
postings survive the snapshot and a damaged snapshot is rebuilt from the tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import OC, PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


BODY_MODULE = f"""@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix oc: <{OC}> .
oc:skill_acme_kit_alpha_rules a oc:Skill ;
    dcterms:identifier "alpha-rules" ;
    oc:extends oc:skill_acme_kit_alpha ;
    oc:impartsKnowledge [ a oc:KnowledgeNode ;
        oc:directiveContent "Never widdershins the flux capacitor before a dry run" ;
        oc:severityLevel "CRITICAL" ] ;
    oc:hasSection [ a oc:Section ; oc:sectionTitle "Quasar alignment" ;
        oc:hasContent [ a oc:Paragraph ; oc:textContent "Calibrate the gyroscope daily." ] ] .
"""


def _install(cli: CliRunner, tmp_path: Path) -> None:
    reg = build_registry(
        tmp_path / "reg",
        [
            PackageSpec(
                id="acme/kit",
                skills=[
                    SkillSpec(
                        "alpha",
                        "Run lab procedures",
                        intents=("run a lab procedure",),
                        extra_modules={"alpha/rules.ttl": BODY_MODULE},
                    ),
                    SkillSpec("beta", "Tune the flux capacitor", intents=("tune a capacitor",)),
                    SkillSpec("gamma", "Write reports", intents=("write a report",)),
                ],
            )
        ],
    )
    cli("--registry", str(reg), "install", "acme/kit", check=True)


def test_body_text_is_found_and_weighted_below_the_header(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    _install(cli, tmp_path)
    svc = service(env)
    for q in ("widdershins", "quasar alignment", "calibrate the gyroscope"):
        results = svc.search(q, mode="bm25").results
        assert [r.skill for r in results] == ["acme/kit/alpha"], q
    ranked = [r.skill for r in svc.search("flux capacitor", mode="bm25").results]
    assert ranked == ["acme/kit/beta", "acme/kit/alpha"]  # header first, body second


def test_damaged_body_postings_rebuild_from_the_tree(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    _install(cli, tmp_path)
    service(env)  # writes the snapshot
    (meta,) = (Path(env["ONTOSKILLS_HOME"]) / "state/derived/search-index").glob("*.json")
    doc = json.loads(meta.read_text())
    del doc["arrays"]["bm25.header"]  # an older layout
    meta.write_text(json.dumps(doc))
    svc = service(env)
    assert svc.state.data.bodies is not None  # rebuilt from the Turtle, not patched up
    assert [r.skill for r in svc.search("widdershins", mode="bm25").results] == ["acme/kit/alpha"]
