"""Client details of signed registries: the sparse index, --offline, what the lock records
(what commands that never read a registry import: test_lazy_imports.py)."""

from __future__ import annotations

import json
from pathlib import Path

from ontoskills.errors import EXIT_INTEGRITY
from ontoskills.publish.registry import SignedInit, init_registry
from ontoskills.signing.repo import Policy
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.publish.conftest import AUTHOR
from tests.signing.conftest import Client, Signed, installed_client
from tests.signing.test_attacks import refused


def _sparse_signed(tmp_path: Path) -> Signed:
    root, keys = tmp_path / "m" / "registry", tmp_path / "m" / "keys"
    init_registry(root, git=True, author=AUTHOR, sparse=True, signed=SignedInit(keys, Policy()))
    reg = Signed(root, keys, tmp_path / "m" / "work")
    reg.publish("acme/tools")
    reg.publish("acme/extra")
    return reg


def test_sparse_entries_are_signed_and_checked(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, git_author: None
) -> None:
    reg = _sparse_signed(tmp_path)
    with FaultServer(reg.root) as srv:
        client = installed_client(cli, env, "http", srv.url, reg.root / "metadata/1.root.json")
        assert any(s.path.endswith("index/acme/tools.json") for s in srv.requests)
        entry = reg.root / "index/acme/extra.json"
        doc = json.loads(entry.read_text())
        doc["trust_tier"] = "official"
        reg.put("index/acme/extra.json", json.dumps(doc).encode(), "raise a tier")
        refused(client, EXIT_INTEGRITY, "index/acme/extra.json is not the signed file")


def test_offline_install_from_the_cache(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, signed: Signed
) -> None:
    with FaultServer(signed.root) as srv:
        client = installed_client(cli, env, "http", srv.url, signed.root / "metadata/1.root.json")
    # the server is gone: the cached metadata (still fresh) and blobs are enough
    client.cli("--offline", "ci", check=True)
    client.cli("--offline", "install", "acme/tools", check=True)


def test_lock_records_the_chain_and_update_records_a_rotation(
    cli: CliRunner, env: dict[str, str], signed: Signed
) -> None:
    client = Client(
        cli,
        Path(env["ONTOSKILLS_HOME"]),
        "git",
        str(signed.root),
        signed.root / "metadata/1.root.json",
    )
    client.add()
    client.cli("install", "acme/tools", check=True)
    lock = (client.home / "ontoskills.lock").read_text()
    from tuf.api.metadata import Metadata

    root = Metadata.from_bytes((signed.root / "metadata/root.json").read_bytes())
    for keyid in root.signed.roles["root"].keyids:
        assert keyid in lock
    from ontoskills.signing.admin import rotate

    repo = signed.repo()
    rotate(repo, "root", None, signed.keys)
    signed.write(repo.out, "rotate root")
    signed.publish("acme/tools", "1.1.0")
    client.cli("update", check=True)
    new_root = Metadata.from_bytes((signed.root / "metadata/root.json").read_bytes())
    lock = (client.home / "ontoskills.lock").read_text()
    assert new_root.signed.roles["root"].keyids[0] in lock
