"""install/ci over static HTTP registries on loopback, in-process (the domain; exit codes
are the raised exception's); Ctrl-C needs a real process and goes through the CLI."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.errors import AuthError, NetworkError
from tests.conftest import REPO
from tests.helpers.domain import Domain
from tests.helpers.faults import Fault, FaultServer, wait_for
from tests.helpers.registry import PackageSpec, build_registry, sample_packages

FAST = {"ONTOSKILLS_RETRY_BASE": "0.01", "ONTOSKILLS_RETRY_MAX": "2"}
SECRET = "ontoskills-secret-token-42"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    packages = sample_packages()
    for spec in packages:
        spec.files_array = True  # our publish format: assets + hashes + exec bits over HTTP
    return build_registry(tmp_path / "reg", packages)


@pytest.fixture
def server(registry: Path) -> Iterator[FaultServer]:
    with FaultServer(registry) as srv:
        yield srv


def _home(env: dict[str, str]) -> Path:
    return Path(env["ONTOSKILLS_HOME"])


def test_http_install_with_files_array_gets_assets_and_exec_bits(
    domain: Domain, server: FaultServer, registry: Path, env: dict[str, str]
) -> None:
    domain.install("acme/devtools", registry=server.url)
    root = _home(env) / "ontologies/author/acme/devtools"
    src = registry / "packages/acme/devtools"
    assert (root / "debugging/scripts/run.sh").stat().st_mode & stat.S_IXUSR
    assert not (root / "LICENSE").stat().st_mode & stat.S_IXUSR
    assert (root / "debugging/notes.md").read_bytes() == (src / "debugging/notes.md").read_bytes()
    lock = lockfile.load(_home(env) / "ontoskills.lock")
    pkg = lock.packages["acme/devtools"]
    reg = lock.registries[pkg.registry]
    assert reg.kind == "http" and reg.index_sha256 and reg.commit is None
    assert pkg.file("debugging/scripts/run.sh").executable  # type: ignore[union-attr]
    assert "LICENSE" in {f.path for f in pkg.files}


def test_http_without_files_array_installs_what_the_manifest_lists(
    domain: Domain, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = build_registry(tmp_path / "plain", sample_packages())
    with FaultServer(reg) as srv:
        domain.install("acme/devtools", registry=srv.url)
    root = _home(env) / "ontologies/author/acme/devtools"
    assert (root / "debugging/ontoskill.ttl").is_file()
    assert not (root / "LICENSE").exists()  # unlisted assets cannot be discovered over HTTP
    assert any("cannot list folders" in w for w in domain.warnings)  # and the user is told so


def test_http_with_files_array_gives_no_listing_warning(
    domain: Domain, server: FaultServer
) -> None:
    domain.install("acme/devtools", registry=server.url)
    assert not any("cannot list folders" in w for w in domain.warnings)


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in FAST.items():
        monkeypatch.setenv(key, value)


def test_429_retry_after_then_200_succeeds(
    domain: Domain, server: FaultServer, env: dict[str, str], fast_retries: None
) -> None:
    server.storm(r"^/index\.json$", 429, times=1, retry_after="1")
    server.storm(r"\.ttl$", 429, times=2, retry_after="0")
    domain.install("acme/design", registry=server.url)
    assert (_home(env) / "ontologies/author/acme/design/colorize/ontoskill.ttl").is_file()
    assert server.paths().count("/index.json") == 2


def test_five_503s_exit_5_naming_host_and_status(
    domain: Domain, server: FaultServer, env: dict[str, str], fast_retries: None
) -> None:
    server.storm(r"^/index\.json$", 503, times=5)
    with pytest.raises(NetworkError) as err:
        domain.install("acme/design", registry=server.url)
    assert err.value.exit_code == 5
    assert "127.0.0.1" in err.value.message and "503" in err.value.message
    assert server.paths().count("/index.json") == 5
    assert not (_home(env) / "ontoskills.lock").exists()


def said(domain: Domain, err: pytest.ExceptionInfo[Exception] | None = None) -> str:
    """Everything the CLI would print: the error (message + hint) and every warning/note."""
    text = [*domain.warnings, *domain.notes]
    if err is not None:
        text += [str(getattr(err.value, "message", err.value)), str(getattr(err.value, "hint", ""))]
    return "\n".join(text)


def test_401_exit_6_with_hint_and_token_never_printed(
    domain: Domain, server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.storm(r"^/index\.json$", 401, times=None)
    with pytest.raises(AuthError) as err:
        domain.install("acme/design", registry=server.url)
    assert err.value.exit_code == 6
    assert "ONTOSKILLS_TOKEN" in said(domain, err)
    monkeypatch.setenv("ONTOSKILLS_TOKEN", SECRET)
    # an ad-hoc registry gets the token only with consent (issue 22, docs/SECURITY.md)
    monkeypatch.setenv("ONTOSKILLS_TOKEN_FOR", server.url.rstrip("/"))
    with pytest.raises(AuthError) as err:
        domain.install("acme/design", registry=server.url)
    assert SECRET not in said(domain, err)
    assert server.requests[-1].headers["authorization"] == f"Bearer {SECRET}"


def test_token_not_forwarded_across_hosts_nor_printed(
    domain: Domain,
    registry: Path,
    server: FaultServer,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ONTOSKILLS_TOKEN", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET + "-gh")
    monkeypatch.setenv("ONTOSKILLS_TOKEN_FOR", server.url.rstrip("/"))  # ad-hoc: consent
    with FaultServer(registry) as other:
        # Files live on "another host" (localhost vs 127.0.0.1): a CDN redirect.
        server.redirect(r"^/packages/", other.url.replace("127.0.0.1", "localhost"))
        report = domain.install("acme/devtools", registry=server.url)
        assert other.requests, "the redirect was followed"
        assert all("authorization" not in s.headers for s in other.requests)
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in said(domain) + json.dumps(report.to_json())
    assert SECRET not in (_home(env) / "ontoskills.lock").read_text()


def test_second_install_revalidates_index_with_etag(
    domain: Domain, server: FaultServer, tmp_path: Path
) -> None:
    domain.install("acme/design", registry=server.url)
    Domain(tmp_path / "h2", registry=server.url).install("acme/design")
    index = [s for s in server.requests if s.path == "/index.json"]
    assert len(index) == 2 and "if-none-match" in index[1].headers


def test_offline_warm_succeeds_and_cold_fails_clearly(
    domain: Domain, server: FaultServer, tmp_path: Path, env: dict[str, str]
) -> None:
    offline = Domain(registry=server.url, offline=True)
    with pytest.raises(NetworkError) as err:
        offline.install("acme/devtools")
    assert err.value.exit_code == 5
    assert "offline" in said(offline, err) and "without --offline" in said(offline, err)
    assert server.requests == []
    domain.install("acme/devtools", registry=server.url)
    seen = len(server.requests)
    other = tmp_path / "home2"
    Domain(other, registry=server.url, offline=True).install("acme/devtools")
    assert len(server.requests) == seen
    first = (_home(env) / "ontoskills.lock").read_bytes()
    assert (other / "ontoskills.lock").read_bytes() == first


def test_ci_from_http_lock_in_empty_home(
    server: FaultServer, tmp_path: Path, env: dict[str, str]
) -> None:
    lock = tmp_path / "project" / "ontoskills.lock"
    Domain(lockfile=lock, registry=server.url).install("acme/devtools", "acme/design")
    fresh = tmp_path / "fresh"
    Domain(fresh, lock, cache=tmp_path / "cold-cache").ci()
    for pid in ("acme/devtools", "acme/design"):
        a = _home(env) / "ontologies/author" / pid
        b = fresh / "ontologies/author" / pid
        files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
        for rel in files:
            assert (a / rel).read_bytes() == (b / rel).read_bytes()
            assert (a / rel).stat().st_mode & 0o111 == (b / rel).stat().st_mode & 0o111


def test_ctrl_c_mid_download_exit_130_and_state_intact(
    domain: Domain, tmp_path: Path, env: dict[str, str]
) -> None:
    big = PackageSpec(
        id="acme/big",
        skills=sample_packages()[1].skills,
        assets={f"data/blob{i}.bin": (os.urandom(4096), False) for i in range(8)},
        files_array=True,
    )
    reg = build_registry(tmp_path / "slowreg", [*sample_packages(), big])
    home = _home(env)
    with FaultServer(reg) as srv:
        domain.install("acme/design", registry=srv.url)
        lock_before = (home / "ontoskills.lock").read_bytes()
        tree_before = sorted(p.as_posix() for p in (home / "ontologies").rglob("*"))
        srv.fail(r"/data/", Fault("slow", chunk=256, seconds=0.2), times=None)
        proc = subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "--registry", srv.url, "install", "acme/big"],
            env={**os.environ, **env, "PYTHONPATH": str(REPO)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert wait_for(lambda: any("/data/" in p for p in srv.paths()), timeout=60)
        assert wait_for(lambda: (home / ".staging").exists() and any((home / ".staging").iterdir()))
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted" in err
        assert (home / "ontoskills.lock").read_bytes() == lock_before
        assert sorted(p.as_posix() for p in (home / "ontologies").rglob("*")) == tree_before
        assert not (home / "ontologies/author/acme/big").exists()
        assert list(domain.lock().packages) == ["acme/design"]  # `list` reads it
        domain.install("acme/design", registry=srv.url)
    staging = home / ".staging"
    assert not staging.exists() or not any(staging.iterdir())
