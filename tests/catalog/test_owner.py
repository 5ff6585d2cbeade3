"""Which skill a package file belongs to: one rule (`Manifest.owner_of`) for installing one
skill, the catalog (sub-modules, assets, intents files), intent vectors and the reference
servers' index.

What the copies did before (each assertion marked "before" failed on that code):
- install's skill selection took the first skill whose folder holds a file, so with two
  skills at the package root, `install author/pkg/second` left out `second`'s own module;
- the catalog attached a sub-module to the skill its `oc:extends` names even when the
  manifest puts it in another skill's folder (so enabling/disabling acted on one skill and
  the module's intents ranked another);
- a skill's assets were every non-Turtle file below its folder, nested skills' files too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.embeddings.vectors import read_manifest, read_modules
from ontoskills.manifest import parse_manifest
from tests.conftest import CliRunner
from tests.helpers.registry import OC, PackageSpec, SkillSpec, build_registry, iri_name
from tests.helpers.skills import service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


PID = "acme/mixed"


def _mixed() -> PackageSpec:
    extends_base = (
        f"@prefix oc: <{OC}> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        f'oc:skill_acme_mixed_tools_more a oc:Skill ; dcterms:identifier "tools-more" ;\n'
        f"    oc:extends oc:{iri_name('acme', 'mixed', 'base')} ;\n"
        '    oc:resolvesIntent "sharpen the chisel" .\n'
    )
    return PackageSpec(
        id=PID,
        trust_tier="official",
        skills=[
            SkillSpec("base", "Base skill at the root", intents=("lay a foundation",),
                      path="base.ttl", vectors=False),
            SkillSpec("second", "Second skill at the root", intents=("frame the walls",),
                      path="second.ttl", vectors=False),
            SkillSpec("tools", "Tools in their folder", intents=("pick a tool",),
                      extra_modules={"tools/more.ttl": extends_base}),
        ],
        assets={
            "tools/scripts/run.sh": (b"#!/bin/sh\necho run\n", True),
            "LICENSE": (b"MIT\n", False),
        },
    )  # fmt: skip


def test_owner_of_unit() -> None:
    manifest = parse_manifest(
        json.dumps(
            {
                "package_id": PID,
                "version": "1",
                "skills": [
                    {"id": "base", "path": "base.ttl"},
                    {"id": "second", "path": "second.ttl"},
                    {"id": "tools", "path": "tools/ontoskill.ttl"},
                    {"id": "deep", "path": "tools/deep/ontoskill.ttl"},
                ],
            }
        ).encode(),
        source="package.json",
    )

    def owner(path: str) -> str | None:
        entry = manifest.owner_of(path)
        return entry.id if entry is not None else None

    assert owner("second.ttl") == "second"  # its own main module (before: `base`)
    assert owner("notes.md") == "base"  # shared folder: the first listed
    assert owner("tools/x/y.ttl") == "tools"
    assert owner("tools/deep/a/b.sh") == "deep"  # the deepest folder
    assert owner("toolsmith/x.ttl") == "base"  # a prefix of the name is not a folder
    no_root = parse_manifest(
        json.dumps(
            {"package_id": PID, "version": "1", "skills": [{"id": "t", "path": "t/m.ttl"}]}
        ).encode(),
        source="package.json",
    )
    assert no_root.owner_of("LICENSE") is None and no_root.owner_of("t/m.ttl").id == "t"  # type: ignore[union-attr]


def test_every_reader_groups_files_by_owner_of(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    registry = build_registry(tmp_path / "reg", [_mixed()])
    cli("registry", "add", "reg", str(registry), check=True)
    home = Path(env["ONTOSKILLS_HOME"])

    cli("install", f"{PID}/second", check=True)
    lock = lockfile.load(home / "ontoskills.lock")
    files = {f.path for f in lock.packages[PID].files}
    assert "second.ttl" in files  # before: left out (owned by `base`, not selected)
    assert "tools/more.ttl" not in files and "tools/scripts/run.sh" not in files
    svc = service(env)
    assert [s.key for s in svc.skills()] == [f"{PID}/second"]
    assert not any("second" in p for p in svc.problems)  # before: "main module unavailable"

    cli("install", PID, check=True)
    svc = service(env)
    tools = svc.context(f"{PID}/tools")
    assert [m["path"] for m in tools.modules] == ["tools/more.ttl"]  # before: under `base`
    assert "sharpen the chisel" in tools.record.intents
    assert svc.search("sharpen the chisel", mode="bm25").results[0].skill == f"{PID}/tools"
    base = svc.context(f"{PID}/base").to_json()
    assert [Path(a).name for a in base["assets"]] == ["LICENSE"]  # before: + run.sh
    assert [Path(a).name for a in tools.to_json()["assets"]] == ["run.sh"]

    pkg_dir = home / "ontologies/author" / PID
    owners = {m.module: m.skill for m in read_modules(pkg_dir, read_manifest(pkg_dir))}
    assert owners == {
        "base.ttl": "base",
        "second.ttl": "second",  # before: `base` (vectors took the folder only)
        "tools/ontoskill.ttl": "tools",
        "tools/more.ttl": "tools",
    }

    cli("disable", f"{PID}/tools", check=True)
    index = (home / "ontologies/system/index.enabled.ttl").read_text()
    assert "tools/more.ttl" not in index and "second.ttl" in index
    assert all(s.key != f"{PID}/tools" for s in service(env).skills())
