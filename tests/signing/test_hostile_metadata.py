"""Hostile trust anchors and metadata layouts beyond test_attacks: root.json files handed to
`registry add --root` that are huge, endless, not JSON, nested to blow a parser's stack,
full of keys, of a key type we cannot use, with thresholds of 0 or below, odd expiries, or
written to smuggle terminal escapes into the error; and a registry whose `metadata/` holds
symlinks out of it. Each is refused with one clear line and a documented exit code, and
the configuration, the trust folder, the lock and the installed tree are left as they were."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from securesystemslib.formats import encode_canonical
from tuf.api.metadata import Metadata, Root

from ontoskills.signing import MAX_ROOT_BYTES
from ontoskills.signing import keys as keymod
from tests.conftest import CliRunner
from tests.signing.conftest import Client, Signed

Doc = dict[str, Any]


def root_doc(signed: Signed) -> Doc:
    return json.loads((signed.root / "metadata/root.json").read_bytes())


def resign(signed: Signed, doc: Doc) -> bytes:
    """The doc signed by the registry's real root key: only the change under test is wrong."""
    md = Metadata[Root].from_dict(copy.deepcopy(doc))
    md.signatures.clear()
    for signer in keymod.load(signed.keys, ("root",)).signers["root"]:
        md.sign(signer, append=True)
    return md.to_bytes()


def fake_key() -> tuple[str, Doc]:
    key = {
        "keytype": "ed25519",
        "scheme": "ed25519",
        "keyval": {"public": secrets.token_hex(32)},
    }
    return hashlib.sha256(encode_canonical(key).encode()).hexdigest(), key  # type: ignore[union-attr]


def with_keys(n: int) -> Callable[[Doc], Doc]:
    def change(doc: Doc) -> Doc:
        for _ in range(n):
            keyid, key = fake_key()
            doc["signed"]["keys"][keyid] = key
            doc["signed"]["roles"]["root"]["keyids"].append(keyid)
        return doc

    return change


def set_in(path: tuple[str, ...], value: Any) -> Callable[[Doc], Doc]:
    def change(doc: Doc) -> Doc:
        node = doc["signed"]
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
        return doc

    return change


def unknown_key_type(doc: Doc) -> Doc:
    keyid = doc["signed"]["roles"]["root"]["keyids"][0]
    doc["signed"]["keys"][keyid]["keytype"] = "quantum-rsa-9000"
    doc["signed"]["keys"][keyid]["scheme"] = "quantum-rsa-9000"
    return doc


ESC = "\x1b]0;pwned\x07\x1b[2J"


def escapes_in_key_type(doc: Doc) -> Doc:
    keyid = doc["signed"]["roles"]["root"]["keyids"][0]
    doc["signed"]["keys"][keyid]["keytype"] = ESC + "A" * 100_000
    return doc


# (label, change to the signed doc, re-signed?, expected exit)
SIGNED_CHANGES: list[tuple[str, Callable[[Doc], Doc], bool, int]] = [
    ("threshold 0", set_in(("roles", "root", "threshold"), 0), True, 8),
    ("threshold -1", set_in(("roles", "root", "threshold"), -1), True, 8),
    ("threshold 10**30", set_in(("roles", "root", "threshold"), 10**30), True, 8),
    ("threshold as text", set_in(("roles", "root", "threshold"), "1"), True, 8),
    ("unparsable expiry", set_in(("expires",), "tomorrow"), True, 8),
    ("expiry with an offset", set_in(("expires",), "2030-01-01T00:00:00+05:00"), True, 8),
    ("year 10000", set_in(("expires",), "10000-01-01T00:00:00Z"), True, 8),
    ("version 0", set_in(("version",), 0), True, 8),
    ("unknown key type", unknown_key_type, True, 8),
    ("escapes in a key type", escapes_in_key_type, True, 8),
    ("keys as a list", set_in(("keys",), []), True, 8),
    ("1,500 unsigned keys needed", with_keys(1_500), True, 8),  # threshold 1 of 1,501: ok
    ("a 10,000-key root", with_keys(10_000), True, 2),  # over 512 KB
]


@pytest.mark.parametrize(
    ("label", "change", "resigned", "code"), SIGNED_CHANGES, ids=[c[0] for c in SIGNED_CHANGES]
)
def test_hostile_root_json_for_registry_add(
    cli: CliRunner,
    env: dict[str, str],
    signed: Signed,
    tmp_path: Path,
    label: str,
    change: Callable[[Doc], Doc],
    resigned: bool,
    code: int,
) -> None:
    doc = change(root_doc(signed))
    try:
        data = resign(signed, doc) if resigned else json.dumps(doc).encode()
    except (ValueError, TypeError, KeyError, AttributeError):  # python-tuf will not sign it
        data = json.dumps(doc).encode()
    root_file = tmp_path / "root.json"
    root_file.write_bytes(data)
    if label.startswith("1,500"):
        code = 0  # a big but valid root: accepted, each key printed once
    refused(cli, env, signed, root_file, code)


def refused(cli: CliRunner, env: dict[str, str], signed: Signed, root: Path, code: int) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    config = home / "config.toml"
    before = config.read_bytes() if config.exists() else None
    proc = cli("registry", "add", "corp", str(signed.root), "--root", str(root), timeout=120)
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    if code == 0:
        return
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith("error: "), proc.stderr[:500]
    assert len(proc.stderr) < 4096, len(proc.stderr)  # one line and a hint, not the file
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (config.read_bytes() if config.exists() else None) == before
    assert not (home / "trust").exists() or not any((home / "trust").iterdir())


@pytest.mark.parametrize(
    "make",
    ["huge", "dev-zero", "fifo", "folder", "not-json", "nested", "utf16", "empty", "nul"],
)
def test_root_files_that_are_not_roots(
    cli: CliRunner, env: dict[str, str], signed: Signed, tmp_path: Path, make: str
) -> None:
    """Never read past the bound, never wait on a FIFO: exit 2 for what is not a file of a
    root's size, exit 8 for a file that is not a self-signed root."""
    root = tmp_path / "root.json"
    code = 8
    if make == "huge":
        root.write_bytes(b" " * (MAX_ROOT_BYTES + 1))
        code = 2
    elif make == "dev-zero":
        root.symlink_to("/dev/zero")
        code = 2
    elif make == "fifo":
        os.mkfifo(root)
        code = 2
    elif make == "folder":
        root.mkdir()
        code = 2
    elif make == "not-json":
        root.write_bytes(b"<html>not a root</html>")
    elif make == "nested":
        root.write_bytes(b"[" * (MAX_ROOT_BYTES - 1))
    elif make == "utf16":
        root.write_bytes(json.dumps(root_doc(signed)).encode("utf-16"))
    elif make == "empty":
        root.write_bytes(b"")
    elif make == "nul":
        root.write_bytes(b"\x00" * 1000)
    refused(cli, env, signed, root, code)


def test_a_far_future_expiry_is_accepted_when_signed(
    cli: CliRunner, env: dict[str, str], signed: Signed, tmp_path: Path
) -> None:
    """Year 9999 is a legal expiry (the maintainers' choice, `registry verify` does not warn
    yet): a root signed with it is trusted."""
    doc = set_in(("expires",), "9999-12-31T23:59:59Z")(root_doc(signed))
    root = tmp_path / "root.json"
    root.write_bytes(resign(signed, doc))
    proc = cli("registry", "add", "corp", str(signed.root), "--root", str(root))
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def kind() -> str:
    """A symlink in the registry's tree is a folder registry's concern (git stores a link as
    a blob, HTTP serves what the server decides): conftest's `client` over a folder only."""
    return "folder"


@pytest.mark.parametrize("plant", ["metadata-folder", "timestamp-file"])
def test_metadata_symlinks_out_of_a_folder_registry(
    client: Client, signed: Signed, tmp_path: Path, plant: str
) -> None:
    """A folder registry whose `metadata/` (or one file in it) is a symlink to files outside
    it, here a copy holding a secret: refused (exit 4), the secret never printed, the
    install and the lock as before."""
    before = client.state()
    secret = "SECRET-" + secrets.token_hex(8)
    outside = tmp_path / "outside"
    meta = signed.root / "metadata"
    if plant == "metadata-folder":
        meta.rename(outside)
        (outside / "timestamp.json").write_text(secret)
        meta.symlink_to(outside, target_is_directory=True)
    else:
        outside.mkdir()
        (outside / "timestamp.json").write_text(secret)
        (meta / "timestamp.json").unlink()
        (meta / "timestamp.json").symlink_to(outside / "timestamp.json")
    proc = client.run("update")
    assert proc.returncode == 4, proc.stderr  # type: ignore[attr-defined]
    assert secret not in proc.stderr + proc.stdout  # type: ignore[attr-defined]
    assert "symlink" in proc.stderr or "outside" in proc.stderr  # type: ignore[attr-defined]
    assert client.state() == before


def test_a_git_registry_moving_mid_command_is_read_at_one_commit(
    signed: Signed, tmp_path: Path
) -> None:
    """The remote's branch moves (a publish: new bins, snapshot, timestamp) after a command
    has refreshed the metadata: every later read of that command, metadata or target, is
    still at the commit it resolved, so it never pairs one commit's snapshot with another's
    bins (mix-and-match by timing). The next command sees the new commit whole."""
    from ontoskills.paths import Cache
    from ontoskills.registries import RegistryConfig
    from ontoskills.signing.client import SignedRegistry
    from ontoskills.sources import SourceOptions, open_source

    def opened() -> tuple[Any, SignedRegistry]:
        source = open_source(
            RegistryConfig(name="corp", url=str(signed.root), kind="git"),
            SourceOptions(cache=Cache(tmp_path / "cache")),
        )
        reg = SignedRegistry(source, tmp_path / "state", anchor)
        reg.refresh()
        return source, reg

    anchor = (signed.root / "metadata/root.json").read_bytes()
    source, reg = opened()
    try:
        commit = source.commit
        timestamp = source.read("metadata/timestamp.json", max_bytes=MAX_ROOT_BYTES)
        signed.publish("acme/extra")  # the branch moves under the running command
        assert reg.target("packages/acme/extra/package.json") is None
        assert reg.target("packages/acme/tools/package.json") is not None
        assert source.read("metadata/timestamp.json", max_bytes=MAX_ROOT_BYTES) == timestamp
        assert source.commit == commit
    finally:
        reg.close()
        source.close()
    source, reg = opened()  # the next command
    try:
        assert source.commit != commit
        assert reg.target("packages/acme/extra/package.json") is not None
    finally:
        reg.close()
        source.close()
