"""Registries of kind `oci` against a real CNCF distribution (`docker-registry`) on loopback
(issue 27 item 3): publish then install, a tampered blob (exit 4), a missing tag (exit 7),
401 (exit 6) with htpasswd auth."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ontoskills.registries import RegistryKind, detect_kind
from tests.conftest import CliRunner
from tests.helpers.ociregistry import OciRegistry, oci_registry, require_binary
from tests.publish.conftest import make_package


@pytest.fixture
def oci(tmp_path: Path) -> Iterator[OciRegistry]:
    with oci_registry(tmp_path / "oci") as reg:
        yield reg


def installed(home: Path, pid: str) -> dict[str, tuple[bytes, bool]]:
    root = home / "ontologies" / "author" / pid
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def package_files(pkg: Path) -> dict[str, tuple[bytes, bool]]:
    return {
        p.relative_to(pkg).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
        for p in sorted(pkg.rglob("*"))
        if p.is_file() and p.name != ".ontoskills-output"  # pack's marker: not published
    }


def test_detect_kind() -> None:
    assert detect_kind("oci://ghcr.io/acme/skills") == RegistryKind.OCI


def test_publish_then_install_update_and_ci(
    cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    home = Path(env["ONTOSKILLS_HOME"])
    v1 = make_package(tmp_path / "work", "acme/tools", "1.0.0")
    out = json.loads(cli("publish", str(v1), "--registry", oci.url, "--json", check=True).stdout)
    assert out["target"] == "oci" and out["commit"].startswith("sha256:")
    # the same version again is refused (exit 2), a lower one too
    assert cli("publish", str(v1), "--registry", oci.url).returncode == 2

    cli("--registry", oci.url, "install", "acme/tools", check=True)
    assert installed(home, "acme/tools") == package_files(v1)  # exec bits included
    from ontoskills.lockfile import load

    lock = load(home / "ontoskills.lock")
    assert [r.kind for r in lock.registries.values()] == [RegistryKind.OCI]
    # every file's recorded sha256 is the digest of a blob the registry holds
    for f in lock.packages["acme/tools"].files:
        assert oci.blob_file("sha256:" + f.sha256).is_file()

    v2 = make_package(tmp_path / "work", "acme/tools", "1.1.0")
    cli("publish", str(v2), "--registry", oci.url, check=True)
    cli("--registry", oci.url, "update", "acme/tools", check=True)
    assert installed(home, "acme/tools") == package_files(v2)
    before = installed(home, "acme/tools")
    cli("ci", check=True)  # from the lock's oci:// registry
    assert installed(home, "acme/tools") == before


def test_tampered_blob_is_refused(
    cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    pkg = make_package(tmp_path / "work", "acme/tools", "1.0.0")
    cli("publish", str(pkg), "--registry", oci.url, check=True)
    ttl = pkg / "lint" / "ontoskill.ttl"
    import hashlib

    blob = oci.blob_file("sha256:" + hashlib.sha256(ttl.read_bytes()).hexdigest())
    blob.write_bytes(blob.read_bytes() + b"# tampered\n")
    proc = cli("--registry", oci.url, "install", "acme/tools")
    assert proc.returncode == 4, proc.stderr
    assert "tampered" in proc.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies" / "author").exists()


def test_missing_tag_and_missing_registry_are_not_found(
    cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path
) -> None:
    cli = cli_inproc
    # nothing published yet: no index tag at all
    proc = cli("--registry", oci.url, "install", "acme/tools")
    assert proc.returncode == 7, proc.stderr
    cli(
        "publish",
        str(make_package(tmp_path / "w", "acme/tools")),
        "--registry",
        oci.url,
        check=True,
    )
    proc = cli("--registry", oci.url, "install", "acme/nothing")
    assert proc.returncode == 7, proc.stderr


def test_basic_auth_401_and_credentials_from_the_environment(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    require_binary()
    cli = cli_inproc
    secret = "s3cret-Pa55"
    with oci_registry(tmp_path / "auth", users={"alice": secret}) as oci:
        pkg = make_package(tmp_path / "w", "acme/tools")
        proc = cli("publish", str(pkg), "--registry", oci.url)
        assert proc.returncode == 6, proc.stderr
        assert "ONTOSKILLS_OCI_USERNAME" in proc.stderr
        host = f"127_0_0_1_{oci.port}"
        good = {
            f"ONTOSKILLS_OCI_USERNAME_{host}": "alice",
            f"ONTOSKILLS_OCI_PASSWORD_{host}": secret,
        }
        cli("publish", str(pkg), "--registry", oci.url, check=True, extra_env=good)
        assert cli("--registry", oci.url, "install", "acme/tools").returncode == 6
        bad = {**good, f"ONTOSKILLS_OCI_PASSWORD_{host}": "wrong"}
        proc = cli("--registry", oci.url, "install", "acme/tools", extra_env=bad)
        assert proc.returncode == 6 and "wrong" not in proc.stderr + proc.stdout
        # credentials for another host are not sent here
        other = {
            "ONTOSKILLS_OCI_USERNAME_EXAMPLE_COM": "alice",
            "ONTOSKILLS_OCI_PASSWORD_EXAMPLE_COM": secret,
        }
        assert cli("--registry", oci.url, "install", "acme/tools", extra_env=other).returncode == 6
        proc = cli("--registry", oci.url, "install", "acme/tools", extra_env=good)
        assert proc.returncode == 0, proc.stderr
        assert secret not in proc.stderr + proc.stdout
        assert secret not in (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").read_text()

        # the plain names go only to a registry the user configured (like ONTOSKILLS_TOKEN)
        plain = {"ONTOSKILLS_OCI_USERNAME": "alice", "ONTOSKILLS_OCI_PASSWORD": secret}
        home2 = ["--home", str(tmp_path / "home2")]
        proc = cli(*home2, "--registry", oci.url, "install", "acme/tools", extra_env=plain)
        assert proc.returncode == 6 and "registry add" in proc.stderr
        cli(*home2, "registry", "add", "corp", oci.url, check=True)
        cli(*home2, "install", "acme/tools", check=True, extra_env=plain)


def test_bearer_token_flow(
    cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path, env: dict[str, str]
) -> None:
    """The Docker token flow: 401 Bearer challenge -> the realm with basic credentials ->
    a token, sent back to the registry's origin only; never printed."""
    from tests.helpers.ociregistry import TokenFront

    cli = cli_inproc
    secret = "t0ken-Pa55"
    with TokenFront(oci.port, "alice", secret) as front:
        host = f"127_0_0_1_{front.port}"
        creds = {
            f"ONTOSKILLS_OCI_USERNAME_{host}": "alice",
            f"ONTOSKILLS_OCI_PASSWORD_{host}": secret,
        }
        pkg = make_package(tmp_path / "w", "acme/tools")
        assert cli("publish", str(pkg), "--registry", front.url).returncode == 6
        cli("publish", str(pkg), "--registry", front.url, check=True, extra_env=creds)
        assert front.tokens and all("service=test" in q for q in front.token_requests)
        proc = cli("--registry", front.url, "install", "acme/tools", extra_env=creds)
        assert proc.returncode == 0, proc.stderr
        assert installed(Path(env["ONTOSKILLS_HOME"]), "acme/tools")
        shown = (
            proc.stdout
            + proc.stderr
            + (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").read_text()
        )
        assert secret not in shown and not any(t in shown for t in front.tokens)
        bad = {**creds, f"ONTOSKILLS_OCI_PASSWORD_{host}": "nope"}
        home2 = ["--home", str(tmp_path / "home2")]
        assert (
            cli(*home2, "--registry", front.url, "install", "acme/tools", extra_env=bad).returncode
            == 6
        )


def test_mirror_an_oci_registry_for_an_air_gapped_network(
    cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path, env: dict[str, str]
) -> None:
    """`--offline` cannot read oci://; a mirror of it can (and installs the same tree)."""
    cli = cli_inproc
    pkg = make_package(tmp_path / "w", "acme/tools")
    cli("publish", str(pkg), "--registry", oci.url, check=True)
    assert cli("--offline", "--registry", oci.url, "install", "acme/tools").returncode == 2
    mirror = tmp_path / "mirror"
    cli("--registry", oci.url, "mirror", "acme/tools", "--to", str(mirror), check=True)
    home2 = tmp_path / "home2"
    cli(
        "--home",
        str(home2),
        "--offline",
        "--registry",
        str(mirror),
        "install",
        "acme/tools",
        check=True,
    )
    assert installed(home2, "acme/tools") == package_files(pkg)


def test_reads_are_retried_on_503(cli_inproc: CliRunner, oci: OciRegistry, tmp_path: Path) -> None:
    from tests.helpers.ociregistry import TokenFront

    cli = cli_inproc
    with TokenFront(oci.port, "alice", "pw", fail_gets=3) as front:
        host = f"127_0_0_1_{front.port}"
        creds = {
            f"ONTOSKILLS_OCI_USERNAME_{host}": "alice",
            f"ONTOSKILLS_OCI_PASSWORD_{host}": "pw",
        }
        front.fail_gets = 0
        cli("publish", str(make_package(tmp_path / "w", "acme/tools")), "--registry", front.url,
            check=True, extra_env=creds)  # fmt: skip
        front.fail_gets = 3
        proc = cli("--registry", front.url, "install", "acme/tools", extra_env=creds)
        assert proc.returncode == 0, proc.stderr
        assert front.fail_gets == 0  # three 503s were answered, and retried
