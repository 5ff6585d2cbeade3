"""`tree` and `why`: the lock as a tree (requested specs -> packages -> skills and their
same-package dependencies) and why one skill is installed. The real CLI entry over a
synthetic registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages

KIT = PackageSpec(
    "acme/kit",
    [
        SkillSpec("main", "The entry skill", depends=("helper",)),
        SkillSpec("helper", "Helps main", depends=("base",)),
        SkillSpec("base", "What helper builds on"),
        SkillSpec("other", "Unrelated", depends=("base",)),
        SkillSpec("extra", "Opt-in", default_enabled=False),
    ],
    version="2.0.0",
)


@pytest.fixture
def installed(cli_inproc: CliRunner, tmp_path: Path) -> CliRunner:
    """acme/kit/main (+ helper, base) and the whole acme/devtools (debugging <-> planning)."""
    reg = build_registry(tmp_path / "reg", [*sample_packages(), KIT])
    cli_inproc("--registry", str(reg), "install", "acme/kit/main", "acme/devtools", check=True)
    return cli_inproc


def test_tree_draws_specs_packages_skills_and_dependencies(installed: CliRunner) -> None:
    installed("disable", "acme/devtools/reviewing", check=True)
    proc = installed("tree", check=True)
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("ontoskills.lock")
    assert lines[1:] == [
        "acme/devtools",
        "└── acme/devtools 1.2.0 [community] (whole package)",
        "    ├── debugging",
        "    │   └── planning",
        "    │       └── debugging (*)",
        "    ├── planning (*)",
        "    └── reviewing [disabled]",
        "acme/kit/main",
        "└── acme/kit 2.0.0 [community]",
        "    └── main",
        "        └── helper",
        "            └── base",
        "(*) shown above",
    ]
    assert proc.stderr == ""


def test_tree_json_is_typed(installed: CliRunner) -> None:
    doc = json.loads(installed("tree", "--json", check=True).stdout)
    kit = next(p for p in doc["packages"] if p["package"] == "acme/kit")
    assert kit["requested"] == [
        {"spec": "acme/kit/main", "whole_package": False, "skills": ["main"]}
    ]
    assert {s["id"]: s["depends_on"] for s in kit["skills"]} == {
        "base": [],
        "helper": ["base"],
        "main": ["helper"],
    }
    assert doc["problems"] == [] and doc["warnings"] == []


def test_why_names_the_spec_and_the_dependency_chain(installed: CliRunner, tmp_path: Path) -> None:
    proc = installed("why", "acme/kit/base", check=True)
    assert proc.stdout.splitlines() == [
        "acme/kit/base 2.0.0 (enabled) is installed because:",
        "  acme/kit/main is requested, and main -> helper -> base",
        "  (a -> b: skill a depends on skill b, oc:dependsOnSkill)",
    ]
    reg = str(tmp_path / "reg")
    installed("--registry", reg, "install", "acme/kit/other", check=True)  # a 2nd way to base
    installed("disable", "acme/kit/base", check=True)
    doc = json.loads(installed("why", "acme/kit/base", "--json", check=True).stdout)
    assert doc["enabled"] is False
    assert doc["reasons"] == [
        {"spec": "acme/kit/main", "chain": ["main", "helper", "base"]},
        {"spec": "acme/kit/other", "chain": ["other", "base"]},
    ]
    whole = installed("why", "acme/devtools/planning", check=True).stdout
    assert "acme/devtools is requested (the whole package)" in whole
    named = installed("why", "acme/kit/main", check=True).stdout
    assert "  acme/kit/main is requested\n" in named
    pkg = installed("why", "acme/kit", check=True).stdout
    assert "acme/kit/main is requested (one of its skills)" in pkg


def test_why_of_what_is_not_installed(installed: CliRunner) -> None:
    proc = installed("why", "acme/kit/extra")  # in the registry, not brought in
    assert proc.returncode == 7 and "acme/kit has no installed skill extra" in proc.stderr
    assert "installed: base, helper, main" in proc.stderr
    proc = installed("why", "acme/devtool/planning")
    assert proc.returncode == 7 and "did you mean acme/devtools" in proc.stderr
    assert installed("why", "Not A Spec").returncode == 2


def test_an_edited_manifest_is_not_trusted_for_dependencies(
    installed: CliRunner, env: dict[str, str]
) -> None:
    manifest = Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/kit/package.json"
    data = json.loads(manifest.read_text())
    for skill in data["skills"]:
        skill["depends_on_skills"] = []  # would hide why base is there
    manifest.write_text(json.dumps(data))
    proc = installed("tree", check=True)
    assert "acme/kit: package.json does not match the lock" in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "(*) shown above"  # acme/devtools' cycle, drawn first
    assert lines[-8:-1] == [
        "acme/kit/main",
        "└── acme/kit 2.0.0 [community]",
        "    └── main",  # its dependencies are unknown: not drawn under it
        "(in the lock, reached from no requested spec)",
        "└── acme/kit 2.0.0 [community]",
        "    ├── base",
        "    └── helper",
    ]
    why = installed("why", "acme/kit/base", "--json", check=True)
    doc = json.loads(why.stdout)
    assert doc["reasons"] == [] and doc["problems"]
    assert "no requested spec reaches it" in installed("why", "acme/kit/base").stdout


def test_tree_of_an_empty_home_and_of_another_lock(
    cli_inproc: CliRunner, installed: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    lock = str(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    other = str(tmp_path / "empty-home")
    empty = cli_inproc("--home", other, "--lockfile", str(tmp_path / "none.lock"), "tree")
    assert empty.returncode == 0 and empty.stderr == "no packages installed\n"
    assert empty.stdout == ""
    elsewhere = cli_inproc("--lockfile", lock, "tree", check=True)
    assert elsewhere.stdout.splitlines()[0] == lock
