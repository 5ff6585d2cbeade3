"""Delegated role names that try to leave `metadata/`: a registry whose maintainers (hostile,
or with every key stolen) re-delegate the hashed bins to a name prefix with `../`. The
metadata is validly signed, so TUF accepts the names; what must hold is that a role name
is never a path: ngclient percent-encodes it (`..%2Fescape-0.json`) both when it fetches
the file through our source and when it keeps it in `state/tuf/`, so nothing is read from
outside `metadata/` and nothing is written outside the state folder. Over folder, loopback
HTTP and git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tuf.api.metadata import SuccinctRoles

from ontoskills.errors import EXIT_SIGNATURE, OntoskillsError
from ontoskills.signing.repo import meta_of
from tests.signing.conftest import Client, Signed

EVIL = "../escape"


def redelegate(signed: Signed) -> list[str]:
    """Sign targets.json delegating the bins to EVIL-<x>, a snapshot naming those roles and a
    timestamp; each bin's bytes are put where a path join of the role name would land
    (the registry's root, outside `metadata/`), never at the encoded name. The new names."""
    repo = signed.repo()
    old = repo.succinct
    bins = {name: repo.file_bytes(name) for name in old.get_roles()}
    versions = {name: repo.bin(name).signed.version for name in bins}
    targets = repo.targets
    assert targets.signed.delegations is not None
    targets.signed.delegations.succinct_roles = SuccinctRoles(
        old.keyids, old.threshold, old.bit_length, EVIL
    )
    repo.put("targets", targets, "targets")
    snap = repo.snapshot
    # The old bins stay named too: dropping them would be refused as a rollback before any
    # delegated role is fetched, and the escape would go untested.
    snap.signed.meta["targets.json"] = meta_of(repo.file_bytes("targets"), targets.signed.version)
    renamed = []
    for name, data in bins.items():
        new = EVIL + name.removeprefix(old.name_prefix)
        renamed.append(new)
        snap.signed.meta[f"{new}.json"] = meta_of(data, versions[name])
        (signed.root / "metadata" / f"{new}.json").resolve().write_bytes(data)  # ../ joined
    repo.put("snapshot", snap, "snapshot")
    repo.refresh_timestamp()
    signed.write(repo.out, "re-delegate the bins outside metadata/")
    return renamed


def test_bin_names_with_dot_dot_never_leave_metadata(client: Client, signed: Signed) -> None:
    before = client.state()
    state = client.home / "state"
    files_before = {p for p in state.rglob("*") if p.is_file()}
    signed.publish("acme/extra")
    renamed = redelegate(signed)
    assert (signed.root / f"{renamed[0].removeprefix('../')}.json").is_file()  # the bait
    proc = client.cli("install", "acme/extra")
    assert isinstance(proc, subprocess.CompletedProcess)
    # Refused: the role's file is looked up under its encoded name in metadata/, which the
    # registry does not have (a path join would have found the bait and installed).
    assert proc.returncode == EXIT_SIGNATURE, proc.stderr
    assert "error:" in proc.stderr and "hint:" in proc.stderr
    assert "..%2Fescape-" in proc.stderr, proc.stderr  # refused at the escaping role itself
    assert client.state() == before
    assert not (client.home / "ontologies/author/acme/extra").exists()
    # Nothing written outside the state folder's per-registry directories, and what was
    # written there carries the encoded name.
    new = {p for p in state.rglob("*") if p.is_file()} - files_before
    tuf = state / "tuf"
    assert all(tuf in p.parents for p in new), sorted(map(str, new))
    assert not any(p.name.startswith("escape") for p in client.home.rglob("*"))
    assert not (tuf / "escape-0.json").exists() and not (state / "escape-0.json").exists()


def test_encoded_names_are_what_the_source_is_asked_for(signed: Signed, tmp_path: Path) -> None:
    """The same registry read through our SourceFetcher directly (no CLI): the relative
    paths asked of the source keep the role name encoded in one segment."""
    from ontoskills.paths import Cache
    from ontoskills.registries import RegistryConfig
    from ontoskills.signing.client import SignedRegistry
    from ontoskills.sources import SourceOptions, open_source

    signed.publish("acme/extra")
    root = (signed.root / "metadata/root.json").read_bytes()
    redelegate(signed)
    source = open_source(
        RegistryConfig(name="corp", url=str(signed.root), kind="folder"),
        SourceOptions(cache=Cache(tmp_path / "cache")),
    )
    asked: list[str] = []
    read = source.read

    def spy(rel: str, *, max_bytes: int) -> bytes:
        asked.append(rel)
        return read(rel, max_bytes=max_bytes)

    source.read = spy  # type: ignore[method-assign]
    reg = SignedRegistry(source, tmp_path / "state", root)
    try:
        reg.refresh()
        with pytest.raises(OntoskillsError) as refused:  # the encoded name is not there
            reg.target("packages/acme/extra/package.json")
        assert refused.value.exit_code == EXIT_SIGNATURE
    finally:
        reg.close()
        source.close()
    bins = [rel for rel in asked if "escape" in rel]
    assert bins, asked
    assert all(rel.startswith("metadata/..%2Fescape-") for rel in bins), bins
    assert all(rel.count("/") == 1 for rel in bins), bins
    assert not (tmp_path / "escape-0.json").exists()
