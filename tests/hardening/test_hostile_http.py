"""The malicious-registry suite over real loopback HTTP, plus what only HTTP can do to us:
lying Content-Length, gzip bombs, endless bodies, corrupt gzip, cross-host redirects to
tampered content, status storms, dropped and stalled connections. Same contract as the
folder suite (hostile_check.check_case)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case, home_view
from tests.helpers.faults import Fault, FaultServer
from tests.helpers.hostile import (
    EVIL,
    EVIL_ROOT,
    Case,
    build_hostile,
    evil_spec,
    folder_cases,
    gzip_bomb,
)


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


CASES = [c for c in folder_cases() if c.http]
TTL = rf"{EVIL_ROOT}/tool/ontoskill\.ttl$"
MANIFEST = rf"{EVIL_ROOT}/package\.json$"


@functools.cache
def bomb() -> bytes:
    return gzip_bomb(1 << 30)  # 1 GiB of zeros in ~1 MB


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONTOSKILLS_RETRY_BASE", "0.01")
    monkeypatch.setenv("ONTOSKILLS_RETRY_MAX", "0.05")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[FaultServer, Path]]:
    reg = build_hostile(tmp_path / "reg", spec=evil_spec(files_array=True))
    with FaultServer(reg) as srv:
        yield srv, reg


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_registry_over_http(
    case: Case, cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(tmp_path / "reg", mutate=case.mutate)
    if case.http_exit_code is not None:
        case = replace(case, exit_code=case.http_exit_code)
    with FaultServer(reg) as srv:
        check_case(case, cli, tmp_path, srv.url, env)


def _http_cases() -> list[tuple[str, str, Fault, int, dict[str, str]]]:
    gz = {"Content-Encoding": "gzip"}
    return [
        # (id, path pattern, fault, exit code, env)
        (
            "content-length-1gb-lie",
            TTL,
            Fault("raw", 200, {"Content-Length": str(1 << 30)}, body=b"x"),
            4,
            {},
        ),
        (
            "content-length-1gb-manifest",
            MANIFEST,
            Fault("raw", 200, {"Content-Length": str(1 << 30)}, body=b"{}"),
            4,
            {},
        ),
        ("gzip-bomb-file", TTL, Fault("raw", 200, gz, body=bomb()), 4, {}),
        ("gzip-bomb-manifest", MANIFEST, Fault("raw", 200, gz, body=bomb()), 4, {}),
        ("gzip-garbage", TTL, Fault("raw", 200, gz, body=b"this is not gzip at all"), 5, {}),
        ("unknown-encoding", TTL, Fault("raw", 200, {"Content-Encoding": "br"}, body=b"x"), 4, {}),
        ("endless-body", TTL, Fault("flood", size=8 << 20), 4, {"ONTOSKILLS_MAX_FILE_MB": "1"}),
        ("short-body-same-hash", TTL, Fault("raw", 200, {}, body=b"@prefix oc: <x> .\n"), 4, {}),
        ("503-storm", TTL, Fault("status", 503, {"Retry-After": "0"}), 5, {}),
        ("429-storm", MANIFEST, Fault("status", 429, {"Retry-After": "0"}), 5, {}),
        ("drop-always", TTL, Fault("drop"), 5, {}),
        ("truncate-always", TTL, Fault("truncate"), 5, {}),
        ("401", MANIFEST, Fault("status", 401), 6, {}),
        ("403-index", r"index\.json$", Fault("status", 403), 6, {}),
        ("404-manifest", MANIFEST, Fault("status", 404), 7, {}),
        ("418-teapot", TTL, Fault("status", 418), 5, {}),
        (
            "redirect-loop",
            TTL,
            Fault("redirect", 302, location="/" + EVIL_ROOT + "/tool/ontoskill.ttl"),
            5,
            {},
        ),
        (
            "redirect-to-file-scheme",
            TTL,
            Fault("redirect", 302, location="file:///etc/passwd"),
            2,
            {},
        ),
    ]


HTTP_CASES = _http_cases()


@pytest.mark.parametrize("cid,pattern,fault,code,extra", HTTP_CASES, ids=[c[0] for c in HTTP_CASES])
def test_http_lies_and_faults(
    cid: str,
    pattern: str,
    fault: Fault,
    code: int,
    extra: dict[str, str],
    cli: CliRunner,
    tmp_path: Path,
    baseline: Path,
    env: dict[str, str],
    served: tuple[FaultServer, Path],
) -> None:
    srv, _ = served
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    srv.fail(pattern, fault, times=None)
    check_case(Case(cid, code, env=extra), cli, tmp_path, srv.url, env)


@pytest.mark.parametrize("kind", ["drop", "truncate", "stall"])
def test_transient_faults_are_retried_and_the_install_converges(
    kind: str,
    cli: CliRunner,
    tmp_path: Path,
    baseline: Path,
    env: dict[str, str],
    served: tuple[FaultServer, Path],
) -> None:
    srv, reg = served
    seed_home(baseline, env)
    home = Path(env["ONTOSKILLS_HOME"])
    (home / "config.toml").write_text("[network]\ntimeout = 0.5\nretries = 3\n")
    srv.fail(TTL, Fault(kind, seconds=2.0), times=2)
    srv.storm(MANIFEST, 503, times=2, retry_after="0")
    cli("--registry", srv.url, "install", EVIL, check=True)
    installed = home / "ontologies/author" / EVIL / "tool/ontoskill.ttl"
    assert installed.read_bytes() == (reg / EVIL_ROOT / "tool/ontoskill.ttl").read_bytes()
    assert cli("doctor").returncode == 0


def test_cross_host_redirect_to_tampered_content_is_refused(
    cli: CliRunner,
    tmp_path: Path,
    baseline: Path,
    env: dict[str, str],
    served: tuple[FaultServer, Path],
) -> None:
    srv, _reg = served
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    evil_copy = tmp_path / "mirror"
    (evil_copy / EVIL_ROOT / "tool").mkdir(parents=True)
    (evil_copy / EVIL_ROOT / "tool/ontoskill.ttl").write_bytes(b"@prefix oc: <urn:x> .\n")
    with FaultServer(evil_copy) as other:
        srv.redirect(TTL, other.url)
        before = home_view(Path(env["ONTOSKILLS_HOME"]))
        proc = cli(
            "--registry", srv.url, "install", EVIL, extra_env={"ONTOSKILLS_TOKEN": "s3cr3t-token"}
        )
        assert proc.returncode == 4, proc.stderr
        assert home_view(Path(env["ONTOSKILLS_HOME"])) == before
        assert all("authorization" not in r.headers for r in other.requests)
        assert "s3cr3t-token" not in proc.stderr + proc.stdout
        assert any(r.path.endswith("ontoskill.ttl") for r in other.requests)
