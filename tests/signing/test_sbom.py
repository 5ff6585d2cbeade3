"""`ontoskills lock export --format cyclonedx`: the lock as a CycloneDX 1.6 document, checked
against the schema cyclonedx-python-lib bundles (offline) and against the lock itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


ESC = "\\u001b]0;pwned\\u0007\\u001b[2J"  # TOML escapes: the parsed lock holds raw ESC/BEL
HOSTILE_LOCKS = {
    # field = value (TOML), and the exit code: 0 exported (escaped in JSON), 3 refused
    "escapes in the version": ('version = "' + ESC + '"', 0),
    "escapes in a commit": ('commit = "' + ESC + '"', 0),
    "escapes in a skill id": ('skills = { "' + ESC + '" = true }', 0),
    "escapes in requested": ('requested = ["' + ESC + '"]', 0),
    "a 500 KB version": ('version = "' + "x" * 500_000 + '"', 3),
    "escapes in the registry URL": ('@url = "https://example.org/' + ESC + '"', 3),
    "a table as the registry commit": ("@commit = { a = 1 }", 3),
    "a number as the registry commit": ("@commit = 5", 3),
    "a list as the index digest": ("@index_sha256 = [1, 2]", 3),
}


@pytest.mark.parametrize("label", list(HOSTILE_LOCKS))
def test_hostile_lock_fields(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, label: str
) -> None:
    """Hand-edited locks: every string is JSON-escaped in the SBOM (no raw control character
    reaches stdout), and what CycloneDX or the lock's own rules refuse is exit 3 in one line
    (no schema dump, no library warning, no traceback), the previous --output untouched."""
    field, code = HOSTILE_LOCKS[label]
    reg = ['url = "https://example.org/reg"', 'kind = "http"']
    pkg = ['version = "1.0.0"', 'registry = "main"', 'trust_tier = "verified"', "files = []"]
    if field.startswith("@"):
        key = field[1:].split(" ", 1)[0]
        reg = [line for line in reg if not line.startswith(key + " ")] + [field[1:]]
    else:
        key = field.split(" ", 1)[0]
        pkg = [line for line in pkg if not line.startswith(key + " ")] + [field]
    text = "\n".join(
        ["lock_version = 1", "", "[registries.main]", *reg, "", '[packages."acme/tools"]', *pkg]
    )
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "ontoskills.lock").write_text(text + "\n")
    out = tmp_path / "sbom.json"
    out.write_text("previous")
    proc = cli("lock", "export")
    assert proc.returncode == code, proc.stderr[:500]
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr
    if code == 0:
        _valid(proc.stdout)
    else:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint:")
        assert len(lines[0]) < 400, lines[0][:100]
        again = cli("lock", "export", "--output", str(out))
        assert again.returncode == 3 and out.read_text() == "previous"
