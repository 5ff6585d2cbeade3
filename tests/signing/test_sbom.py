"""`ontoskills lock export --format cyclonedx`: the lock as a CycloneDX 1.6 document, checked
against the schema cyclonedx-python-lib bundles (offline) and against the lock itself."""

from __future__ import annotations

import json
from pathlib import Path

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from ontoskills import lockfile, sbom
from ontoskills.lockfile import LockedFile, LockedModel
from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages


def _valid(text: str) -> dict:  # type: ignore[type-arg]
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    return json.loads(text)  # type: ignore[no-any-return]


def test_export_covers_every_locked_file_and_validates(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    registry = build_registry(tmp_path / "reg", sample_packages())
    cli("--registry", str(registry), "install", "acme/devtools", "acme/design", check=True)
    home = Path(env["ONTOSKILLS_HOME"])
    proc = cli("lock", "export", "--format", "cyclonedx", check=True)
    doc = _valid(proc.stdout)
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    lock = lockfile.load(home / "ontoskills.lock")
    by_ref = {c["bom-ref"]: c for c in doc["components"]}
    assert set(by_ref) == set(lock.packages)
    for pid, pkg in lock.packages.items():
        comp = by_ref[pid]
        assert (comp["group"], comp["name"], comp["version"]) == (*pid.split("/"), pkg.version)
        props = {p["name"]: p["value"] for p in comp["properties"]}
        assert props["ontoskills:integrity"] == pkg.integrity
        assert props["ontoskills:trust_tier"] == pkg.trust_tier
        files = {f["name"]: f["hashes"][0]["content"] for f in comp["components"]}
        assert files == {f.path: f.sha256 for f in pkg.files}
    # same lock, same document apart from its timestamp
    again = json.loads(cli("lock", "export", check=True).stdout)
    doc["metadata"].pop("timestamp")
    again["metadata"].pop("timestamp")
    assert again == doc

    out = tmp_path / "sbom.json"
    proc = cli("lock", "export", "--output", str(out), "--json", check=True)
    assert json.loads(proc.stdout)["output"] == str(out)
    _valid(out.read_text())


def test_signed_registry_and_model_are_in_the_document(tmp_path: Path) -> None:
    f = LockedFile("a/ontoskill.ttl", "0" * 64, 3, False)
    lock = lockfile.Lockfile()
    lock.registries["corp"] = lockfile.LockedRegistry(
        "corp",
        "git",
        "https://example.invalid/r.git",
        commit="a" * 40,
        signed=True,
        root_keys=("b" * 64,),
    )
    lock.packages["acme/x"] = lockfile.LockedPackage(
        "acme/x", "1.0.0", "corp", "official", ["acme/x"], [f], {"a": True}, root="packages/acme/x"
    )
    lock.embeddings = LockedModel(
        "m/minilm", "r" * 40, 384, "hub", [LockedFile("model.onnx", "1" * 64, 9)]
    )
    path = tmp_path / "ontoskills.lock"
    lockfile.write(lock, path)
    doc = _valid(sbom.export(lock, path))
    comp = next(c for c in doc["components"] if c["bom-ref"] == "acme/x")
    props = {p["name"]: p["value"] for p in comp["properties"]}
    assert props["ontoskills:signed"] == "true" and props["ontoskills:root_keys"] == "b" * 64
    assert props["ontoskills:commit"] == "a" * 40
    assert comp["externalReferences"][0] == {"type": "vcs", "url": "https://example.invalid/r.git"}
    assert comp["purl"].startswith("pkg:generic/acme/x@1.0.0")
    model = next(c for c in doc["components"] if c["bom-ref"] == "embeddings")
    assert model["type"] == "machine-learning-model"


def test_no_lock_is_exit_3(cli: CliRunner) -> None:
    proc = cli("lock", "export")
    assert proc.returncode == 3 and "no lockfile" in proc.stderr
