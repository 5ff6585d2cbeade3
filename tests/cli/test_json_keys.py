"""Every verb's `--json` document, key by key: the keys are a public contract.

Each verb runs (through the real CLI entry) on a tiny synthetic registry and its document's
shape is compared with the one pinned here: the exact key set of every object, nested, with
`*` for maps keyed by data (package ids). Renaming a dataclass field cannot change a payload
any more (every reported type has an explicit `to_json()`); this test catches the rest.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages
from tests.helpers.tinymodel import build_tiny_model

Shape = Any  # None (a scalar), {key: Shape}, {"*": Shape} (a map keyed by data), [Shape]

WARNINGS = {"warnings": [None]}
CHANGE = {
    "package_id": None,
    "action": None,
    "version": None,
    "previous_version": None,
    "trust_tier": None,
    "files": None,
    "skills": [None],
    "disabled": [None],
    "enable": None,
    "opt_in": [None],
}
REPORT = {
    "command": None,
    "lockfile": None,
    "lock_changed": None,
    "changes": [CHANGE],
    "recovered": [None],
    **WARNINGS,
}
REGISTRY = {
    "name": None,
    "url": None,
    "kind": None,
    "trust": None,
    "root": None,
    "package_id": None,
}
DRIFT = {"modified": [None], "missing": [None], "extra": [None], "mode": [None], "clean": None}
ERROR = {"error": {"message": None, "hint": None, "exit_code": None}, **WARNINGS}
SEARCH_RESULT = {
    "skill": None,
    "score": None,
    "trust_tier": None,
    "description": None,
    "matched_intents": [None],
    "also_in": [None],
}
CONTEXT = {
    "skill": None,
    "name": None,
    "identifier": None,
    "iri": None,
    "trust_tier": None,
    "description": None,
    "category": None,
    "nature": None,
    "aliases": [None],
    "intents": [None],
    "requirements": [None],
    "knowledge": [None],
    "workflows": [None],
    "sections": [None],
    "code_examples": [None],
    "dependencies": [None],
    "modules": [{"path": None, "iri": None}],
    "path": None,
    "assets": [None],
    "scripts": [None],
    "notes": [None],
}
FILE = {"path": None, "sha256": None, "size": None, "executable": None}
PUBLISH = {
    "command": None,
    "package_id": None,
    "version": None,
    "registry": None,
    "target": None,
    "trust_tier": None,
    "previous_version": None,
    "dry_run": None,
    "files": [FILE],
    "diff": {"*": None},
    "commit": None,
    "branch": None,
    "signed": [None],
    **WARNINGS,
}
VERIFY = {  # `signed`: null for an unsigned registry, the metadata summary for a signed one
    "command": None,
    "registry": None,
    "commit": None,
    "ok": None,
    "summary": {
        "packages": None,
        "skills": None,
        "modules": None,
        "files_checked": None,
        "errors": None,
        "warnings": None,
    },
    "findings": [{"level": None, "code": None, "package": None, "message": None}],
    **WARNINGS,
}


EMPTY = "(empty list)"  # the element shape of [] : matches anything


def shape(value: Any) -> Shape:
    """The keys of a JSON value, nested; a list's elements merged."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        merged: Shape = EMPTY
        for item in value:
            merged = merge(merged, shape(item))
        return [merged]
    return None


def merge(a: Shape, b: Shape) -> Shape:
    if a == EMPTY or b == EMPTY:
        return b if a == EMPTY else a
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a.get(k, EMPTY), b.get(k, EMPTY)) for k in {**a, **b}}
    if isinstance(a, list) and isinstance(b, list):
        return [merge(a[0], b[0])]
    return a if a == b else f"mixed {a!r} / {b!r}"


def mismatches(got: Shape, want: Shape, where: str = "$") -> list[str]:
    """Where `got` (a document's shape) differs from `want` (the pinned one)."""
    if got == EMPTY:  # an empty list's elements could be anything
        return []
    if want is None:
        return [] if got is None else [f"{where}: expected a scalar, got {got!r}"]
    if isinstance(want, list):
        if not isinstance(got, list):
            return [f"{where}: expected a list, got {got!r}"]
        return mismatches(got[0], want[0], f"{where}[]")
    if not isinstance(got, dict):
        return [f"{where}: expected an object, got {got!r}"]
    if list(want) == ["*"]:  # keys are data (package ids): every value has one shape
        return [m for k, v in got.items() for m in mismatches(v, want["*"], f"{where}.{k}")]
    out = []
    if set(got) != set(want):
        out.append(f"{where}: keys {sorted(got)} != pinned {sorted(want)}")
    for k in sorted(set(got) & set(want)):
        out += mismatches(got[k], want[k], f"{where}.{k}")
    return out


def assert_shape(doc: dict[str, Any], want: Shape) -> None:
    assert doc.get("schema_version") == 1, doc
    problems = mismatches(shape(doc), {"schema_version": None, **want})
    assert not problems, (problems, json.dumps(doc, indent=1)[:3000])


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    reg = build_registry(tmp_path / "reg", sample_packages())
    publishable = build_registry(
        tmp_path / "src",
        [PackageSpec("acme/notes", [SkillSpec("jot", "Jot a note", vectors=False)])],
    )
    pkg = tmp_path / "pkg"
    shutil.copytree(publishable / "packages/acme/notes", pkg)
    return {
        "reg": reg,
        "pkg": pkg,
        "model": build_tiny_model(tmp_path / "model"),
        "out": tmp_path / "export",
        "proj": tmp_path / "proj",
        "newreg": tmp_path / "newreg",
        "gitreg": tmp_path / "gitreg",
        "sreg": tmp_path / "sreg",
        "keys": tmp_path / "keys",
        "sbom": tmp_path / "sbom.json",
    }


def json_of(run: CliRunner, *args: str, code: int = 0) -> dict[str, Any]:
    proc = run("--json", *args)
    assert proc.returncode == code, (args, proc.stdout, proc.stderr)
    doc: dict[str, Any] = json.loads(proc.stdout)  # one document, nothing else on stdout
    return doc


def test_every_verb_json_keys(cli_inproc: CliRunner, world: dict[str, Path]) -> None:
    run = cli_inproc
    reg, model = str(world["reg"]), str(world["model"])
    seen: set[str] = set()

    def check(want: Shape, *args: str, code: int = 0) -> dict[str, Any]:
        doc = json_of(run, *args, code=code)
        assert_shape(doc, want)
        seen.add(" ".join(args[:2]) if args[0] in ("registry", "cache") else args[0])
        return doc

    added = {"registry": REGISTRY, "root_fingerprints": [None], **WARNINGS}
    check(added, "registry", "add", "reg", reg)
    check({"registries": [{**REGISTRY, "default": None}], **WARNINGS}, "registry", "list")
    check(REPORT, "install", "acme/devtools", "--model", model)
    # A package claiming a higher tier than its index: the warning is in the document.
    doc = check(REPORT, "install", "acme/design")
    assert any("declares trust tier" in w for w in doc["warnings"]), doc
    mirrored = {
        "command": None,
        "to": None,
        "registry": None,
        "signed": None,
        "packages": [{"id": None, "version": None, "files": None}],
        "copied": None,
        "skipped": None,
        "removed": None,
        "bytes_copied": None,
        "model": None,
        "notes": [None],
        **WARNINGS,
    }
    mirror_to = str(world["out"].parent / "mirror-out")
    check(mirrored, "mirror", "acme/devtools", "--to", mirror_to, "--with-embeddings")
    listed = {
        "package": None,
        "version": None,
        "trust_tier": None,
        "registry": None,
        "skills": {"enabled": None, "installed": None},
        "files": None,
        "with_embeddings": None,
    }
    check({"lockfile": None, "packages": [listed], **WARNINGS}, "list")
    info = {
        "package": None,
        "version": None,
        "description": None,
        "trust_tier": None,
        "registry": {"name": None, "kind": None, "url": None, "commit": None},
        "path": None,
        "integrity": None,
        "with_embeddings": None,
        "files": None,
        "bytes": None,
        "skills": [{"id": None, "enabled": None, "description": None, "depends_on": [None]}],
    }
    check({**info, **WARNINGS}, "info", "acme/devtools")
    (world["reg"] / "packages/acme/devtools/LICENSE").write_text("Apache-2.0\n")
    row = {
        "package": None,
        "version": None,
        "trust_tier": None,
        "latest_version": None,
        "latest_trust_tier": None,
        "status": None,
        "changes": [None],
    }
    check({"packages": [row], **WARNINGS}, "outdated")
    doctor = {
        "healthy": None,
        "lock_error": None,
        "packages": {"*": DRIFT},
        "unmanaged": [None],
        "staging": [None],
        "stale_lock_owner": None,
        "problems": [None],
        "model_drift": [None],
        "planted_links": [None],
        "store": {"linked": None, "copies": None, "relinkable": None, "issues": [None]},
        **WARNINGS,
    }
    check(doctor, "doctor")
    check(REPORT, "disable", "acme/devtools/planning")
    check(REPORT, "enable", "acme/devtools/planning")
    check(REPORT, "update", "acme/devtools")
    check(REPORT, "ci")
    check({"command": None, "derived": {"*": None}, **WARNINGS}, "export-embeddings", "acme/design")
    search = {
        "query": None,
        "mode": None,
        "confidence": None,
        "results": [SEARCH_RESULT],
        "disabled": [None],
        "installed_skills": None,
        **WARNINGS,
    }
    check(search, "search", "debug failing tests")
    check({**CONTEXT, **WARNINGS}, "show", "acme/devtools/debugging")
    part = {
        "skill": None,
        "part": None,
        "kind": None,
        "title": None,
        "chars": None,
        "parent": None,
        "children": [None],
        "text": None,
    }
    check({**part, **WARNINGS}, "show", "acme/devtools/debugging#about")
    page = {
        "kind": None,
        "skill": None,
        "part": None,
        "page": None,
        "pages": None,
        "chars": None,
        "next": None,
        "text": None,
    }
    check({**page, **WARNINGS}, "show", "acme/devtools/debugging#about/1")
    check(REPORT, "remove", "acme/design")
    check({"path": None, "bytes": None, **WARNINGS}, "cache", "dir")
    check({"path": None, "freed_bytes": None, **WARNINGS}, "cache", "clean")
    check({"removed": None, **WARNINGS}, "registry", "remove", "reg")
    snippet = {"client": None, "scope": None, "path": None, "snippet": None, **WARNINGS}
    check(snippet, "mcp-config", "--client", "cursor", "--print")
    applied = {
        "client": None,
        "scope": None,
        "path": None,
        "name": None,
        "action": None,
        "backup": None,
        "entry": {"command": None, "args": [None]},
        **WARNINGS,
    }
    proj = str(world["proj"])
    check(applied, "mcp-config", "--client", "cursor", "--project", "--dir", proj)
    pack = {
        "command": None,
        "path": None,
        "written": None,
        "package_id": None,
        "version": None,
        "skills": [None],
        "modules": None,
        "files": [FILE],
        **WARNINGS,
    }
    check(pack, "pack", str(world["pkg"]))
    init = {
        "command": None,
        "path": None,
        "existing": None,
        "commit": None,
        "keys_dir": None,
        "keyids": {"*": [None]},
        **WARNINGS,
    }
    check(init, "registry", "init", str(world["newreg"]), "--no-git")
    check(PUBLISH, "publish", str(world["pkg"]), "--registry", str(world["newreg"]), "--dry-run")
    check(PUBLISH, "publish", str(world["pkg"]), "--registry", str(world["newreg"]))
    verify = {**VERIFY, "signed": None}
    check(verify, "registry", "verify", str(world["newreg"]))
    check(verify, "registry", "verify", reg, code=4)  # 8-dimensional sample intents
    check_signed(run, check, world)
    export = {
        "command": None,
        "output_dir": None,
        "model": None,
        "dimension": None,
        "modules": None,
        "intents": None,
        "files": [None],
        **WARNINGS,
    }
    check(
        export,
        "export-embeddings",
        "--ontology-root",
        str(world["reg"] / "packages"),
        "--output-dir",
        str(world["out"]),
        "--model",
        model,
    )
    check(ERROR, "info", "acme/nope", code=7)
    spec = {"spec": None, "whole_package": None, "skills": [None]}
    skill = {"id": None, "enabled": None, "depends_on": [None]}
    pkg = {
        "package": None,
        "version": None,
        "trust_tier": None,
        "registry": None,
        "requested": [spec],
        "skills": [skill],
    }
    check({"lockfile": None, "packages": [pkg], "problems": [None], **WARNINGS}, "tree")
    why = {
        "target": None,
        "package": None,
        "version": None,
        "skill": None,
        "enabled": None,
        "reasons": [{"spec": None, "chain": [None]}],
        "problems": [None],
        **WARNINGS,
    }
    check(why, "why", "acme/devtools/planning")
    # Every verb that takes --json was run above (serve has no JSON output).
    assert {
        "registry add", "registry list", "registry remove", "registry init", "registry verify",
        "install", "list", "info", "outdated", "doctor", "disable", "enable", "update", "ci",
        "export-embeddings", "search", "show", "remove", "cache dir", "cache clean",
        "mcp-config", "pack", "publish", "registry sign", "registry keys", "lock", "tree", "why",
        "mirror",
    } <= seen, seen  # fmt: skip


def check_signed(run: CliRunner, check: Any, world: dict[str, Path]) -> None:
    """The signed-registry verbs (issue 17): init --signed, publish, verify, sign, keys, add
    --root, and the lock's SBOM export."""
    sreg, keys = str(world["sreg"]), str(world["keys"])
    init = {
        "command": None,
        "path": None,
        "existing": None,
        "commit": None,
        "keys_dir": None,
        "keyids": {"*": [None]},
        **WARNINGS,
    }
    doc = check(init, "registry", "init", "--signed", sreg, "--no-git", "--keys", keys)
    assert doc["keys_dir"] == keys and set(doc["keyids"]) >= {"root", "timestamp"}, doc
    published = check(PUBLISH, "publish", str(world["pkg"]), "--registry", sreg, "--keys", keys)
    assert "metadata/timestamp.json" in published["signed"], published
    verify = {**VERIFY, "signed": {"root_version": None, "targets": None, "expires": {"*": None}}}
    check(verify, "registry", "verify", sreg)
    signed = {"command": None, "path": None, "signed": [None], "commit": None}
    check({**signed, "expires": {"*": None}, **WARNINGS}, "registry", "sign", "--timestamp",
          sreg, "--keys", keys)  # fmt: skip
    role = {"role": None, "keyids": [None], "threshold": None}
    keys_list = {"command": None, "root_version": None, "roles": [role], **WARNINGS}
    check(keys_list, "registry", "keys", "list", sreg)
    rotated = {
        **signed,
        "role": None,
        "keyids": [None],
        "retired": [None],
        "retired_files": None,
        "retired_dir": None,
        **WARNINGS,
    }
    check(rotated, "registry", "keys", "rotate", "timestamp", sreg, "--keys", keys)
    doc = check(
        {"registry": REGISTRY, "root_fingerprints": [None], **WARNINGS},
        "registry", "add", "corp", sreg, "--trust-on-first-use",
    )  # fmt: skip
    assert doc["registry"]["root"] and doc["root_fingerprints"], doc
    check(REPORT, "install", "acme/notes")
    export = {"command": None, "format": None, "output": None, "packages": None, "sbom": None}
    check({**export, **WARNINGS}, "lock", "export", "--output", str(world["sbom"]))
    # Without --output the SBOM itself is inside the document (its schema is CycloneDX's,
    # validated in tests/signing/test_sbom.py): our keys around it are pinned here.
    doc = json_of(run, "lock", "export")
    sbom = doc.pop("sbom")
    assert sbom["bomFormat"] == "CycloneDX" and doc["output"] is None, sbom
    assert_shape(doc, {k: v for k, v in {**export, **WARNINGS}.items() if k != "sbom"})


def test_no_payload_is_copied_from_fields() -> None:
    """Public JSON is written key by key: nothing under commands/ (and no reported type's
    `to_json`) serialises `__dict__` or `asdict`, where a field rename would leak out."""
    import ontoskills

    root = Path(ontoskills.__file__).parent
    reported = [
        "commands",
        "catalog/context.py",
        "catalog/disclosure.py",
        "embeddings/export.py",
        "install/mirror.py",
        "install/mutation.py",
        "install/graph.py",
        "install/queries.py",
        "install/state.py",
        "publish/pack.py",
        "publish/publish.py",
        "publish/registry.py",
        "publish/verify.py",
        "registries.py",
        "search/answer.py",
        "signing/repo.py",
    ]
    offenders = []
    for rel in reported:
        for path in sorted((root / rel).rglob("*.py")) if (root / rel).is_dir() else [root / rel]:
            text = path.read_text(encoding="utf-8")
            if "__dict__" in text or "asdict(" in text:
                offenders.append(str(path.relative_to(root)))
    assert offenders == []


def test_shape_check_can_fail() -> None:
    """The comparison itself: a renamed, missing or extra key is reported, nested."""
    want = {"a": None, "b": [{"c": None}], "m": {"*": {"d": None}}}
    assert mismatches(shape({"a": 1, "b": [{"c": 2}], "m": {"x/y": {"d": 3}}}), want) == []
    assert mismatches(shape({"a": 1, "b": [], "m": {}}), want) == []  # [] and {} say nothing
    assert mismatches(shape({"a": 1, "b": [{"c2": 2}], "m": {}}), want)  # renamed, nested
    assert mismatches(shape({"a": 1, "b": [], "m": {"x": {"d": 1, "e": 2}}}), want)  # extra
    assert mismatches(shape({"b": [], "m": {}}), want)  # missing
    assert mismatches(shape({"a": {"z": 1}, "b": [], "m": {}}), want)  # object for a scalar


def test_outdated_row_of_a_package_gone_from_its_registry(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    """A package its registry no longer lists: only its locked fields and the status, no
    latest version, tier or changes (and the text table shows `-` and the status)."""
    reg = build_registry(tmp_path / "reg", sample_packages())
    json_of(cli_inproc, "registry", "add", "reg", str(reg))
    json_of(cli_inproc, "install", "acme/design")
    index = reg / "index.json"
    listed = json.loads(index.read_text(encoding="utf-8"))
    listed["packages"] = [p for p in listed["packages"] if p["package_id"] != "acme/design"]
    index.write_text(json.dumps(listed), encoding="utf-8")
    doc = json_of(cli_inproc, "outdated")
    gone = {"package": None, "version": None, "trust_tier": None, "status": None}
    assert_shape(doc, {"packages": [gone], **WARNINGS})
    assert doc["packages"][0]["status"] == "removed-from-registry", doc
    text = cli_inproc("outdated")
    assert text.returncode == 0, text.stderr
    assert "removed-from-registry" in text.stdout and " - " in text.stdout, text.stdout
