"""A maintainer's and a user's life with a signed registry, through the real CLI: init,
publish, install, ci, key rotation (reaching and not reaching the root threshold), timestamp
refresh, trust on first use, require_signed."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

from tuf.api.metadata import Metadata, Root

from ontoskills.errors import EXIT_EXPIRED, EXIT_SIGNATURE, EXIT_UNSIGNED
from ontoskills.paths import Cache
from ontoskills.progress import NullReporter
from ontoskills.registries import RegistryConfig
from ontoskills.signing import keys as keymod
from ontoskills.signing.gate import Expectation, open_registry
from ontoskills.signing.repo import Policy
from ontoskills.sources import SourceOptions, open_source
from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages
from tests.signing.conftest import Client, Signed, installed_client, make_signed
from tests.signing.test_attacks import refused

GIT = {"GIT_AUTHOR_NAME": "Maintainer", "GIT_AUTHOR_EMAIL": "m@example.invalid"}


def lock_of(home: Path) -> str:
    return (home / "ontoskills.lock").read_text()


def test_signed_round_trip_through_the_cli(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    """init --signed -> publish -> install -> ci -> rotate timestamp and root -> install."""
    from tests.publish.conftest import make_package

    reg, keys = tmp_path / "reg", tmp_path / "keys"
    proc = cli(
        "registry",
        "init",
        "--signed",
        str(reg),
        "--keys",
        str(keys),
        "--threshold",
        "root=2",
        "--expires",
        "timestamp=12h",
        "--bins",
        "8",
        "--json",
        extra_env=GIT,
        check=True,
    )
    doc = json.loads(proc.stdout)
    assert len(doc["keyids"]["root"]) == 2 and len(list((reg / "metadata").glob("bins-*"))) == 8
    assert "PRIVATE KEY" not in proc.stdout + proc.stderr  # keys are never printed
    assert all(oct(p.stat().st_mode)[-3:] == "600" for p in keys.glob("*.pem"))
    assert not list(reg.rglob("*.pem"))
    pkg = make_package(tmp_path, "acme/tools", "1.0.0")
    cli("publish", str(pkg), "--registry", str(reg), "--keys", str(keys), extra_env=GIT, check=True)
    # Signatures and files land in ONE commit.
    show = subprocess.run(
        ["git", "show", "--stat", "--format=", "HEAD"],
        cwd=reg,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "packages/acme/tools/package.json" in show and "metadata/timestamp.json" in show
    verify = cli("registry", "verify", str(reg), "--json", check=True)
    report = json.loads(verify.stdout)
    assert report["summary"]["errors"] == 0, report["findings"]
    assert report["signed"]["root_version"] == 1 and report["signed"]["targets"] >= 5

    cli(
        "registry", "add", "corp", str(reg), "--root", str(reg / "metadata/1.root.json"), check=True
    )
    cli("install", "acme/tools", check=True)
    home = Path(env["ONTOSKILLS_HOME"])
    lock = lock_of(home)
    assert "signed = true" in lock
    cli("ci", check=True)

    # Rotations: the timestamp key (a new root signed by both root keys), then a root key.
    cli(
        "registry",
        "keys",
        "rotate",
        "timestamp",
        str(reg),
        "--keys",
        str(keys),
        extra_env=GIT,
        check=True,
    )
    cli(
        "registry",
        "keys",
        "rotate",
        "root",
        str(reg),
        "--keys",
        str(keys),
        "--threshold",
        "1",
        extra_env=GIT,
        check=True,
    )
    assert (reg / "metadata/3.root.json").is_file()
    assert len(list((keys / "retired").glob("*.pem"))) == 3
    cli("registry", "sign", str(reg), "--timestamp", "--keys", str(keys), extra_env=GIT, check=True)
    pkg2 = make_package(tmp_path, "acme/tools", "1.1.0")
    cli(
        "publish", str(pkg2), "--registry", str(reg), "--keys", str(keys), extra_env=GIT, check=True
    )
    proc = cli("update", check=True)
    assert "updated acme/tools 1.1.0" in proc.stderr
    # The lock's (old) root keys still chain to the current root: ci on a fresh machine too.
    shutil.rmtree(home / "state")
    (home / "config.toml").unlink()
    cli("ci", check=True)


def test_rotation_that_reaches_the_threshold_is_followed(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, git_author: None
) -> None:
    signed = make_signed(tmp_path / "m", policy=_root_threshold(2))
    signed.publish("acme/tools")
    client = _client(cli, env, signed, tmp_path)
    repo = signed.repo()
    from ontoskills.signing.admin import rotate

    written = rotate(repo, "timestamp", None, signed.keys)
    signed.write(repo.out, "rotate the timestamp key")
    assert len(Metadata.from_bytes(repo.out["metadata/2.root.json"]).signatures) == 2
    assert written.replaced
    signed.publish("acme/extra")
    client.cli("install", "acme/extra", check=True)


def test_rotation_below_the_threshold_is_refused(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, git_author: None
) -> None:
    signed = make_signed(tmp_path / "m", policy=_root_threshold(2))
    signed.publish("acme/tools")
    client = _client(cli, env, signed, tmp_path)
    signed.publish("acme/extra")
    # One stolen root key: a root v2 that hands the timestamp role to the attacker's key.
    stolen = keymod.load(signed.keys, ("root",)).signers["root"][0]
    evil = keymod.generate()
    root = Metadata[Root].from_bytes((signed.root / "metadata/root.json").read_bytes())
    new = Metadata(copy.deepcopy(root.signed))
    new.signed.version = 2
    for keyid in list(new.signed.roles["timestamp"].keyids):
        new.signed.revoke_key(keyid, "timestamp")
    new.signed.add_key(evil.public_key, "timestamp")
    new.sign(stolen)
    data = new.to_bytes()
    signed.write({"metadata/2.root.json": data, "metadata/root.json": data}, "evil root")
    refused(client, EXIT_SIGNATURE, "not signed by the threshold", "rotation")


def test_registry_sign_timestamp_recovers_from_a_freeze(
    cli: CliRunner, env: dict[str, str], signed: Signed, tmp_path: Path
) -> None:
    from tests.signing.conftest import past

    client = _client(cli, env, signed, tmp_path)
    signed.publish("acme/extra")
    repo = signed.repo(now=past(3), roles=("timestamp",))
    signed.write(repo.refresh_timestamp(), "the job stopped")
    frozen = client.cli("install", "acme/extra")
    assert frozen.returncode == EXIT_EXPIRED and "retry later" in frozen.stderr, frozen.stderr
    proc = client.cli(
        "registry", "sign", str(signed.root), "--timestamp", "--keys", str(signed.keys), check=True
    )
    assert "timestamp.json" in proc.stderr
    client.cli("install", "acme/extra", check=True)


def test_trust_on_first_use_prints_and_records_the_keys(
    cli: CliRunner, env: dict[str, str], signed: Signed
) -> None:
    proc = cli("registry", "add", "corp", str(signed.root), "--trust-on-first-use", check=True)
    root = Metadata[Root].from_bytes((signed.root / "metadata/root.json").read_bytes())
    for keyid in root.signed.keys:
        assert keyid in proc.stderr
    stored = Path(env["ONTOSKILLS_HOME"]) / "trust/corp.root.json"
    assert stored.read_bytes() == (signed.root / "metadata/root.json").read_bytes()
    assert (
        'root = "trust/corp.root.json"'
        in (Path(env["ONTOSKILLS_HOME"]) / "config.toml").read_text()
    )
    cli("install", "acme/tools", check=True)


def test_a_root_file_that_is_not_self_signed_is_refused(
    cli: CliRunner, signed: Signed, tmp_path: Path
) -> None:
    doc = json.loads((signed.root / "metadata/root.json").read_text())
    doc["signatures"] = []
    bad = tmp_path / "root.json"
    bad.write_text(json.dumps(doc))
    proc = cli("registry", "add", "corp", str(signed.root), "--root", str(bad))
    assert proc.returncode == EXIT_SIGNATURE and "self-signed" in proc.stderr


def test_require_signed_refuses_an_unsigned_registry(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    plain = build_registry(tmp_path / "plain", sample_packages())
    proc = cli("--require-signed", "--registry", str(plain), "install", "acme/devtools")
    assert proc.returncode == EXIT_UNSIGNED and "not signed" in proc.stderr
    assert "registry init --signed" in proc.stderr  # the next step: sign it
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()
    (Path(env["ONTOSKILLS_HOME"])).mkdir(parents=True, exist_ok=True)
    (Path(env["ONTOSKILLS_HOME"]) / "config.toml").write_text("require_signed = true\n")
    proc = cli("--registry", str(plain), "install", "acme/devtools")
    assert proc.returncode == EXIT_UNSIGNED
    # without the requirement, unsigned registries work as before, silently
    (Path(env["ONTOSKILLS_HOME"]) / "config.toml").unlink()
    proc = cli("--registry", str(plain), "install", "acme/devtools", check=True)
    assert "signed" not in proc.stderr


def test_the_builtin_store_passes_require_signed_with_a_notice(tmp_path: Path) -> None:
    plain = build_registry(tmp_path / "plain", sample_packages())
    src = open_source(
        RegistryConfig("ontostore", str(plain), "folder"),
        SourceOptions(cache=Cache(tmp_path / "cache")),
    )
    rep = NullReporter()
    opened = open_registry(
        src, tmp_path / "tuf", Expectation(require_signed=True, builtin=True), rep
    )
    assert opened.root_keys is None and opened.source is src
    assert rep.warnings == [
        "ontostore (the built-in OntoStore) is not signed yet; require_signed lets it through "
        "until it is"
    ]


def test_old_locks_without_signature_fields_still_read(tmp_path: Path) -> None:
    from ontoskills import lockfile

    text = '# x\nlock_version = 1\n\n[registries.r]\nkind = "folder"\nurl = "/x"\n'
    lock = lockfile.parse(text, tmp_path / "ontoskills.lock")
    assert lock.registries["r"].signed is False and lock.registries["r"].root_keys == ()


def _root_threshold(n: int) -> Policy:
    policy = Policy()
    policy.thresholds["root"] = n
    return policy


def _client(cli: CliRunner, env: dict[str, str], signed: Signed, tmp_path: Path) -> Client:
    root_file = tmp_path / "trusted-root.json"
    shutil.copyfile(signed.root / "metadata/root.json", root_file)
    return installed_client(cli, env, "git", str(signed.root), root_file)


def test_ci_refuses_a_registry_replaced_with_a_new_root(
    cli: CliRunner, env: dict[str, str], tmp_path: Path, git_author: None
) -> None:
    """The host is taken over: same URL, same package, a fresh root and keys. A fresh CI
    machine (no config, no state) has only the lock: its root keys are on no root there."""
    signed = make_signed(tmp_path / "m")
    signed.publish("acme/tools")
    client = _client(cli, env, signed, tmp_path)
    lock_before = (client.home / "ontoskills.lock").read_bytes()
    shutil.rmtree(signed.root)
    shutil.rmtree(signed.keys)
    evil = make_signed(tmp_path / "m")
    evil.publish("acme/tools")
    shutil.rmtree(client.home / "state")
    (client.home / "config.toml").unlink()
    proc = cli("ci")
    assert proc.returncode == EXIT_SIGNATURE, proc.stderr
    assert "no root of the registry has the root keys recorded in the lock" in proc.stderr
    assert (client.home / "ontoskills.lock").read_bytes() == lock_before
