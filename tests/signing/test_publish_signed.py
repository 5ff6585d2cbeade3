"""The maintainer's side of a signed registry: what publish signs, what it refuses to sign,
how a killed publish completes, and what `registry verify` reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tuf.api.metadata import Metadata

from ontoskills.errors import FormatError, UsageError
from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import SignedInit, init_registry
from ontoskills.signing.repo import Policy
from tests.conftest import CliRunner
from tests.publish.conftest import AUTHOR, make_package, tree_state
from tests.signing.conftest import Signed, past


def _bins_with(signed: Signed, path: str) -> dict:  # type: ignore[type-arg]
    repo = signed.repo()
    name = repo.bin_for(path)
    return dict(repo.bin(name).signed.targets)


def test_publish_signs_every_file_and_drops_the_old_version(signed: Signed) -> None:
    files = json.loads((signed.root / "packages/acme/tools/package.json").read_text())["files"]
    for f in files:
        target = _bins_with(signed, f"packages/acme/tools/{f['path']}")[
            f"packages/acme/tools/{f['path']}"
        ]
        assert (target.length, target.hashes["sha256"]) == (f["size"], f["sha256"])
    signed.publish("acme/tools", "1.1.0")  # same paths, new bytes
    pkg = (signed.root / "packages/acme/tools/package.json").read_bytes()
    import hashlib

    target = _bins_with(signed, "packages/acme/tools/package.json")[
        "packages/acme/tools/package.json"
    ]
    assert target.hashes["sha256"] == hashlib.sha256(pkg).hexdigest()


def test_a_hand_edited_bin_is_never_signed(signed: Signed, tmp_path: Path) -> None:
    repo = signed.repo()
    rel = f"metadata/{repo.bin_for('index.json')}.json"
    doc = json.loads((signed.root / rel).read_text())
    doc["signed"]["targets"]["packages/evil/x/package.json"] = {
        "length": 1,
        "hashes": {"sha256": "0" * 64},
    }
    signed.put(rel, json.dumps(doc).encode(), "a pull request edits a bin")
    before = tree_state(signed.root)
    with pytest.raises(FormatError, match="not signed by its bins keys"):
        signed.publish("acme/extra")
    assert tree_state(signed.root) == before


def test_missing_online_keys_write_nothing(signed: Signed, tmp_path: Path) -> None:
    before = tree_state(signed.root)
    pkg = make_package(tmp_path, "acme/extra", "1.0.0")
    with pytest.raises(UsageError, match=r"signing .* needs 1 of its keys"):
        publish(
            pkg,
            PublishOptions(
                registry=str(signed.root),
                keys_dir=tmp_path / "empty",
                author_name=AUTHOR.name,
                author_email=AUTHOR.email,
            ),
        )
    assert tree_state(signed.root) == before


def test_keys_inside_the_registry_are_refused(cli: CliRunner, tmp_path: Path) -> None:
    reg = tmp_path / "reg"
    proc = cli("registry", "init", "--signed", str(reg), "--keys", str(reg / "keys"), "--no-git")
    assert proc.returncode == 2 and "inside the registry" in proc.stderr
    assert not (reg / "keys").exists()


def test_a_killed_publish_is_completed_by_the_next(tmp_path: Path, git_author: None) -> None:
    root, keys = tmp_path / "reg", tmp_path / "keys"
    init_registry(root, git=False, signed=SignedInit(keys, Policy()))
    old = {
        p: (root / p).read_bytes() for p in ("metadata/snapshot.json", "metadata/timestamp.json")
    }
    pkg = make_package(tmp_path, "acme/tools", "1.0.0")
    opts = PublishOptions(registry=str(root), keys_dir=keys)
    publish(pkg, opts)
    for rel, data in old.items():  # killed after the bins, before snapshot and timestamp
        (root / rel).write_bytes(data)
    result = publish(pkg, opts)
    assert result.signed == ["metadata/snapshot.json", "metadata/timestamp.json"]
    from ontoskills.paths import Cache
    from ontoskills.publish.verify import verify_registry
    from ontoskills.registries import RegistryConfig
    from ontoskills.sources import SourceOptions, open_source

    src = open_source(
        RegistryConfig("r", str(root), "folder"), SourceOptions(cache=Cache(tmp_path / "c"))
    )
    report = verify_registry(src)
    assert report.errors == 0, [f.message for f in report.findings]
    assert report.signed is not None and report.signed["targets"] >= 5


def test_verify_reports_signature_chain_and_expiry_problems(cli: CliRunner, signed: Signed) -> None:
    clean = json.loads(cli("registry", "verify", str(signed.root), "--json", check=True).stdout)
    assert clean["summary"]["errors"] == 0 and clean["signed"]["root_version"] == 1
    # a timestamp signed three days ago (expired), a snapshot that no longer names a bin's
    # bytes, and a file the bins do not list
    repo = signed.repo(now=past(3), roles=("timestamp",))
    signed.write(repo.refresh_timestamp(), "stale timestamp")
    name = signed.repo().bin_for("packages/acme/tools/package.json")
    rel = f"metadata/{name}.json"
    md = Metadata.from_bytes((signed.root / rel).read_bytes())
    (signed.root / rel).write_bytes(md.to_bytes() + b" ")
    (signed.root / "packages/acme/tools/lint/notes.md").write_text("unlisted")
    signed.commit("drift")
    proc = cli("registry", "verify", str(signed.root), "--json")
    assert proc.returncode == 4
    codes = {f["code"] for f in json.loads(proc.stdout)["findings"]}
    assert {"expired", "mix-and-match"} <= codes, codes


def test_verify_warns_before_expiry(cli: CliRunner, signed: Signed) -> None:
    # signed 20 hours ago with a 1-day lifetime: 4 hours left, in the last quarter
    repo = signed.repo(now=past(20 / 24), roles=("timestamp",))
    signed.write(repo.refresh_timestamp(), "timestamp nearly out")
    proc = cli("registry", "verify", str(signed.root), "--json", check=True)
    findings = json.loads(proc.stdout)["findings"]
    soon = [f for f in findings if f["code"] == "expires-soon"]
    assert soon and "timestamp.json expires in" in soon[0]["message"]
    assert "registry sign --timestamp" in soon[0]["message"]
