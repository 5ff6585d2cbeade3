"""Each exit code of docs/CLI.md, produced where documented, always as `error:` + `hint:`
(and the JSON error document under --json). Network faults use real HTTP on loopback."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from ontoskills.install import homelock
from ontoskills.paths import Home
from tests.cli.test_errors import assert_error
from tests.conftest import CliRunner
from tests.helpers.http import serve_folder
from tests.helpers.registry import build_registry, sample_packages

FAST = {"ONTOSKILLS_RETRY_BASE": "0.001", "ONTOSKILLS_RETRY_MAX": "0.01"}


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def installed(cli: CliRunner, registry: Path, env: dict[str, str]) -> Path:
    """acme/devtools installed from the folder registry; returns its installed folder."""
    cli("--registry", str(registry), "install", "acme/devtools", check=True)
    return Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_1_home_locked_too_long(cli: CliRunner, registry: Path, env: dict[str, str]) -> None:
    with homelock.hold(Home.resolve(env["ONTOSKILLS_HOME"]), "holder"):
        proc = cli(
            "--json", "--registry", str(registry), "install", "acme/devtools",
            extra_env={"ONTOSKILLS_LOCK_TIMEOUT": "0"},
        )  # fmt: skip
    doc = assert_error(proc, 1, json_doc=True)
    assert "locked" in doc["error"]["message"]


def test_1_update_would_overwrite_local_edits(
    cli: CliRunner, registry: Path, installed: Path
) -> None:
    (installed / "debugging/notes.md").write_text("my notes")
    (registry / "packages/acme/devtools/LICENSE").write_text("Apache-2.0\n")  # upstream change
    doc = assert_error(cli("update", "--json"), 1, json_doc=True)
    assert "debugging/notes.md" in doc["error"]["message"] + doc["error"]["hint"]
    assert (installed / "debugging/notes.md").read_text() == "my notes"


def test_3_locked_install_when_the_lock_would_change(cli: CliRunner, registry: Path) -> None:
    cli("--registry", str(registry), "install", "acme/devtools", check=True)
    proc = cli("--registry", str(registry), "install", "--locked", "acme/design")
    assert_error(proc, 3, json_doc=False)


def test_4_doctor_drift_and_tampered_install(cli: CliRunner, installed: Path) -> None:
    (installed / "LICENSE").write_text("tampered\n")
    proc = cli("doctor", "--json")
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["healthy"] is False


def test_4_min_trust_refusal(cli: CliRunner, registry: Path) -> None:
    proc = cli("--registry", str(registry), "install", "--min-trust", "official", "acme/design")
    assert_error(proc, 4, json_doc=False)
    assert "trust" in proc.stderr


def test_5_unreachable_registry(cli: CliRunner) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    proc = cli("--json", "--registry", url, "install", "acme/design", extra_env=FAST)
    assert_error(proc, 5, json_doc=True)
    assert "127.0.0.1" in proc.stderr


def test_5_offline_and_not_cached(cli: CliRunner, httpserver: HTTPServer, registry: Path) -> None:
    url = serve_folder(httpserver, registry)
    proc = cli("--offline", "--registry", url, "install", "acme/design")
    assert_error(proc, 5, json_doc=False)


def test_6_authentication(cli: CliRunner, httpserver: HTTPServer) -> None:
    httpserver.expect_request("/index.json").respond_with_data("no", status=401)
    proc = cli("--json", "--registry", httpserver.url_for("/"), "install", "acme/design")
    doc = assert_error(proc, 6, json_doc=True)
    assert "TOKEN" in doc["error"]["hint"]


def test_7_unknown_package(cli: CliRunner, registry: Path) -> None:
    proc = cli("--json", "--registry", str(registry), "install", "acme/nothing")
    assert_error(proc, 7, json_doc=True)


def test_2_plain_http_refused(cli: CliRunner) -> None:
    proc = cli("--registry", "http://registry.example/", "install", "acme/design")
    assert_error(proc, 2, json_doc=False)
    assert "http" in proc.stderr
