"""`pack` and `pack --from-skill-md`: deterministic manifests, Turtle that parses."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

from ontoskills.errors import FormatError, UnsafePathError
from ontoskills.manifest import parse_manifest
from ontoskills.publish.pack import pack
from ontoskills.publish.skillmd import convert, parse_skill_md
from ontoskills.skillheader import OC, dependency_iri, read_skill_header
from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages

from .conftest import make_source, write_skill_md


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def test_from_skill_md_is_byte_identical_across_runs(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        cli("pack", "--from-skill-md", str(src), "--out", str(out), check=True)
        outs.append(
            {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.is_file()
            }
        )
    assert outs[0] == outs[1]
    assert sorted(outs[0]) == [
        ".ontoskills-output",  # the marker that proves the folder is ours (not in package)
        "format/SKILL.md",
        "format/ontoskill.ttl",
        "lint/SKILL.md",
        "lint/ontoskill.ttl",
        "lint/scripts/run.sh",
        "package.json",
    ]
    # Re-packing the output in place changes nothing.
    proc = cli("pack", str(tmp_path / "out1"), "--json", check=True)
    assert json.loads(proc.stdout)["written"] is False


def test_manifest_shape_and_files_array(tmp_path: Path) -> None:
    result = convert(make_source(tmp_path / "src"), tmp_path / "out")
    m = parse_manifest(result.data, source="package.json")
    assert m.package_id == "acme/tools" and m.version == "1.0.0"
    assert [s.id for s in m.skills] == ["format", "lint"]
    fmt = m.skill("format")
    assert fmt is not None and fmt.depends_on == ("lint",) and fmt.intents == ("format my code",)
    files = {f.path: f for f in m.files or ()}
    assert files["lint/scripts/run.sh"].executable is True
    assert files["lint/ontoskill.ttl"].executable is False
    assert "package.json" not in files
    # The authors' SKILL.md stays in the package, hashed like any file (served as is).
    md = (tmp_path / "out" / "lint" / "SKILL.md").read_bytes()
    assert files["lint/SKILL.md"].sha256 == hashlib.sha256(md).hexdigest()
    assert md == (tmp_path / "src" / "lint" / "SKILL.md").read_bytes()
    data = (tmp_path / "out" / "lint" / "ontoskill.ttl").read_bytes()
    assert files["lint/ontoskill.ttl"].sha256 == hashlib.sha256(data).hexdigest()
    assert files["lint/ontoskill.ttl"].size == len(data)


def test_skill_md_turtle_parses_with_sections_in_order(tmp_path: Path) -> None:
    convert(make_source(tmp_path / "src"), tmp_path / "out")
    data = (tmp_path / "out" / "format" / "ontoskill.ttl").read_bytes()
    store = ox.Store()
    store.load(data, format=ox.RdfFormat.TURTLE)
    info = read_skill_header(data, "format/ontoskill.ttl", lenient=False)
    assert info.identifier == "format" and info.intents == ["format my code"]
    assert info.depends_on == [dependency_iri("lint")] and info.extends == ""
    rows = store.query(
        f"""PREFIX oc: <{OC}>
        SELECT ?title ?order WHERE {{ ?s a oc:Skill ; oc:hasSection ?sec .
          ?sec oc:sectionTitle ?title ; oc:sectionOrder ?order }} ORDER BY ?order"""
    )
    assert [r["title"].value for r in rows] == ["format", "Steps"]
    code = store.query(f"PREFIX oc: <{OC}> SELECT ?c WHERE {{ ?b oc:codeContent ?c }}")
    assert [r["c"].value for r in code] == ["ontoskills format --json\n"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter\n", "no YAML frontmatter"),
        ("---\nname: Bad Name\ndescription: x\n---\n", "invalid skill name"),
        ("---\nname: ok\n---\n", "description"),
        ("---\nname: ok\ndescription: x\nintents: {a: 1}\n---\n", "list of strings"),
        ("---\nname: [\n---\n", "invalid YAML"),
    ],
)
def test_skill_md_frontmatter_errors(text: str, message: str) -> None:
    with pytest.raises((FormatError, UnsafePathError), match=message.split()[0]):
        parse_skill_md(text, "x/SKILL.md")


def test_pack_compiled_folder_matches_store_layout(tmp_path: Path) -> None:
    specs = sample_packages()
    specs[0].skills[0].extra_modules = {}  # a module without a skill node is refused (below)
    reg = build_registry(tmp_path / "reg", specs)
    root = reg / "packages" / "acme" / "devtools"
    original = json.loads((root / "package.json").read_text())
    result = pack(root)
    assert result.manifest["modules"] == original["modules"]
    assert result.manifest["embedding_files"] == original["embedding_files"]
    assert [s["id"] for s in result.manifest["skills"]] == ["debugging", "planning", "reviewing"]
    deb = result.manifest["skills"][0]
    assert deb["depends_on_skills"] == ["ontoskills-planning"]
    assert deb["intents"] == sorted(original["skills"][0]["intents"])
    paths = [f["path"] for f in result.manifest["files"]]
    assert "LICENSE" in paths and "debugging/scripts/run.sh" in paths
    assert paths == sorted(paths)
    again = pack(root)
    assert again.written is False and again.data == result.data


def test_pack_refuses_module_without_skill_node(tmp_path: Path) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    with pytest.raises(FormatError, match=r"deep-dive\.ttl: expected exactly one"):
        pack(reg / "packages" / "acme" / "devtools")


def test_pack_real_store_package(ontostore: Path, tmp_path: Path) -> None:
    root = tmp_path / "superpowers"
    shutil.copytree(ontostore / "packages" / "obra" / "superpowers", root)
    os.chmod(root / "package.json", 0o644)
    original = json.loads((root / "package.json").read_text())
    result = pack(root)
    assert result.manifest["modules"] == original["modules"]
    assert len(result.manifest["skills"]) == len(original["skills"]) == 14
    assert any(f["executable"] for f in result.manifest["files"])


def test_pack_refuses_symlink(tmp_path: Path) -> None:
    src = make_source(tmp_path / "src")
    (src / "lint" / "link.sh").symlink_to("/etc/passwd")
    with pytest.raises(UnsafePathError, match="symlink"):
        convert(src, tmp_path / "out")


def test_pack_refuses_two_modules_with_one_identifier(tmp_path: Path) -> None:
    src = tmp_path / "src"
    write_skill_md(src, "lint", folder="a")
    write_skill_md(src, "lint", folder="b")
    with pytest.raises(FormatError, match="lint"):
        convert(src, tmp_path / "out", package_id="acme/x")


def test_pack_cli_usage_errors(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    proc = cli("pack", str(src), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "--from-skill-md" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("pack", "--from-skill-md", str(empty), "--id", "a/b")
    assert proc.returncode == 2 and "no SKILL.md" in proc.stderr


def test_pack_reads_the_header_as_the_catalog_does(tmp_path: Path) -> None:
    """skillheader.py's rules: text stripped (pack published "Does x. " with its space) and
    `oc:skill_pdf` is the dependency `pdf` (pack wrote `ontoskills-skill-pdf`)."""
    root = tmp_path / "pkg"
    (root / "x").mkdir(parents=True)
    (root / "x" / "ontoskill.ttl").write_text(
        f"@prefix oc: <{OC}> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        'oc:skill_x a oc:Skill ; dcterms:identifier "x" ; oc:hasDescription "Does x. " ;\n'
        '  oc:resolvesIntent " do x " ; oc:dependsOnSkill oc:skill_pdf, '
        "oc:skill_ontoskills_writing_plans .\n"
    )
    (skill,) = pack(root, package_id="acme/x", write=False).manifest["skills"]
    assert skill["description"] == "Does x." and skill["intents"] == ["do x"]
    assert skill["depends_on_skills"] == ["ontoskills-writing-plans", "ontoskills-pdf"]  # IRI order
