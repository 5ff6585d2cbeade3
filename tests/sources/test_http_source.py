"""HttpSource against real loopback servers: retries, auth, revalidation, limits, offline."""

from __future__ import annotations

import gzip
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ontoskills.errors import (
    AuthError,
    LimitExceededError,
    NetworkError,
    NotFoundError,
    UsageError,
)
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig
from ontoskills.sources import SourceOptions
from ontoskills.sources._auth import token_origins
from ontoskills.sources.http import HttpSource
from tests.helpers.faults import Fault, FaultServer
from tests.helpers.registry import build_registry, sample_packages

MANIFEST = "packages/acme/devtools/package.json"


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONTOSKILLS_RETRY_BASE", "0.01")
    monkeypatch.setenv("ONTOSKILLS_RETRY_MAX", "2")


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def server(registry: Path):  # type: ignore[no-untyped-def]
    with FaultServer(registry) as srv:
        yield srv


def make(
    url: str, tmp_path: Path, *, env: dict[str, str] | None = None, **kw: object
) -> HttpSource:
    env = env or {"_": ""}
    configured = token_origins([url], env)  # as if configured with `registry add`
    opts = SourceOptions(cache=Cache(tmp_path / "cache"), env=env, token_origins=configured, **kw)  # type: ignore[arg-type]
    return HttpSource(RegistryConfig("reg", url, "http"), opts)


def test_index_from_folder_url_and_index_json_url(server: FaultServer, tmp_path: Path) -> None:
    for url in (server.url, server.url.rstrip("/"), server.url + "index.json"):
        src = make(url, tmp_path)
        snap = src.load_index()
        assert {e.package_id for e in snap.index} == {"acme/devtools", "acme/design"}
        assert snap.commit is None and len(snap.sha256) == 64
        src.close()


def test_fetch_to_streams_and_hashes(server: FaultServer, registry: Path, tmp_path: Path) -> None:
    src = make(server.url, tmp_path)
    dest = tmp_path / "out.sh"
    sha, size = src.fetch_to(
        "packages/acme/devtools/debugging/scripts/run.sh", dest, max_bytes=1000
    )
    expected = (registry / "packages/acme/devtools/debugging/scripts/run.sh").read_bytes()
    assert dest.read_bytes() == expected
    assert (sha, size) == (hashlib.sha256(expected).hexdigest(), len(expected))
    assert src.list_package("packages/acme/devtools") is None


def test_etag_revalidation_sends_if_none_match_and_uses_304(
    server: FaultServer, tmp_path: Path
) -> None:
    first = make(server.url, tmp_path).load_index()
    second = make(server.url, tmp_path).load_index()
    index_requests = [s for s in server.requests if s.path == "/index.json"]
    assert len(index_requests) == 2
    assert "if-none-match" not in index_requests[0].headers
    assert index_requests[1].headers["if-none-match"].startswith('"')
    assert second.sha256 == first.sha256
    # The 304 path really was taken: the body came from the cache, so a corrupted cached
    # body must be detected and refetched unconditionally rather than returned.
    blob = Cache(tmp_path / "cache").blob(first.sha256)
    blob.write_bytes(b"garbage")
    third = make(server.url, tmp_path).load_index()
    assert third.sha256 == first.sha256
    assert "if-none-match" not in server.requests[-1].headers
    # ... and the good body replaces the damaged blob (the old writer skipped any blob that
    # existed, so the damage stayed: every run refetched, and --offline never worked again).
    assert Cache(tmp_path / "cache").read_blob(first.sha256) is not None
    assert make(server.url, tmp_path, offline=True).load_index().sha256 == first.sha256


def test_429_with_retry_after_then_success(server: FaultServer, tmp_path: Path) -> None:
    server.storm(r"^/index\.json$", 429, times=1, retry_after="1")
    snap = make(server.url, tmp_path, retries=2).load_index()
    assert len(list(snap.index)) == 2
    assert server.paths().count("/index.json") == 2


def test_503_storm_exhausts_retries_with_network_error(server: FaultServer, tmp_path: Path) -> None:
    server.storm(r"^/index\.json$", 503, times=None, retry_after="0")
    with pytest.raises(NetworkError) as info:
        make(server.url, tmp_path, retries=4).load_index()
    assert server.paths().count("/index.json") == 5
    assert "127.0.0.1" in info.value.message and "HTTP 503" in info.value.message
    assert info.value.exit_code == 5


@pytest.mark.parametrize("kind", ["drop", "truncate"])
def test_broken_connections_are_retried(server: FaultServer, tmp_path: Path, kind: str) -> None:
    server.fail(r"package\.json$", Fault(kind), times=2)
    data = make(server.url, tmp_path, retries=2).read(MANIFEST, max_bytes=1 << 20)
    assert json.loads(data)["package_id"] == "acme/devtools"


def test_stalled_server_times_out(server: FaultServer, tmp_path: Path) -> None:
    server.fail(r"^/index\.json$", Fault("stall", seconds=5), times=None)
    with pytest.raises(NetworkError) as info:
        make(server.url, tmp_path, retries=1, timeout=0.3).load_index()
    assert "Timeout" in info.value.message


def test_401_is_auth_error_with_hint(server: FaultServer, tmp_path: Path) -> None:
    server.storm(r"^/index\.json$", 401, times=None)
    with pytest.raises(AuthError) as info:
        make(server.url, tmp_path).load_index()
    assert info.value.exit_code == 6 and "ONTOSKILLS_TOKEN" in (info.value.hint or "")
    secret = "s3cr3t-token-value"
    with pytest.raises(AuthError) as info:
        make(server.url, tmp_path, env={"ONTOSKILLS_TOKEN": secret}).load_index()
    assert "refused" in (info.value.hint or "")
    assert secret not in info.value.message + (info.value.hint or "")


def test_404_is_not_found(server: FaultServer, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        make(server.url, tmp_path).read("packages/nope/package.json", max_bytes=100)


def test_token_goes_to_own_host_only_and_not_across_redirects(
    registry: Path, tmp_path: Path
) -> None:
    secret = "tok-123456"
    with FaultServer(registry) as home, FaultServer(registry) as other:
        # "localhost" and "127.0.0.1" are different hosts as far as tokens are concerned.
        other_url = other.url.replace("127.0.0.1", "localhost")
        home.redirect(r"^/packages/", other_url)
        src = make(home.url, tmp_path, env={"ONTOSKILLS_TOKEN": secret})
        src.load_index()
        src.read(MANIFEST, max_bytes=1 << 20)
        assert home.requests[0].headers["authorization"] == f"Bearer {secret}"
        assert other.requests, "the redirect was followed"
        assert all("authorization" not in s.headers for s in other.requests)


def test_github_token_only_for_github_hosts(server: FaultServer, tmp_path: Path) -> None:
    make(server.url, tmp_path, env={"GITHUB_TOKEN": "ghp_x"}).load_index()
    assert "authorization" not in server.requests[0].headers


def test_gzip_bodies_are_inflated(registry: Path, tmp_path: Path) -> None:
    with FaultServer(registry, gzip_bodies=True) as srv:
        data = make(srv.url, tmp_path).read(MANIFEST, max_bytes=1 << 20)
    assert data == (registry / MANIFEST).read_bytes()


def test_gzip_bomb_stops_at_max_bytes(tmp_path: Path) -> None:
    root = tmp_path / "bomb"
    root.mkdir()
    (root / "big.bin").write_bytes(b"\0" * (16 << 20))  # 16 MiB of zeros -> ~16 KiB gzipped
    with FaultServer(root, gzip_bodies=True) as srv, pytest.raises(LimitExceededError):
        make(srv.url, tmp_path).fetch_to("big.bin", tmp_path / "out", max_bytes=1 << 20)
    assert (tmp_path / "out").stat().st_size <= 1 << 20
    assert len(gzip.compress(b"\0" * 10)) < 100  # sanity: gzip really is in play


def test_content_length_over_limit_is_refused_before_reading(
    server: FaultServer, tmp_path: Path
) -> None:
    with pytest.raises(LimitExceededError):
        make(server.url, tmp_path).read(MANIFEST, max_bytes=10)


def test_plain_http_refused_off_loopback(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        make("http://registry.example.org/", tmp_path)
    assert "--allow-insecure-http" in (info.value.hint or "")
    make("http://registry.example.org/", tmp_path, allow_insecure_http=True)
    make("https://registry.example.org/", tmp_path)


def test_offline_uses_cache_and_fails_clearly_when_cold(
    server: FaultServer, tmp_path: Path
) -> None:
    with pytest.raises(NetworkError) as info:
        make(server.url, tmp_path, offline=True).load_index()
    assert "offline" in info.value.message and "without --offline" in (info.value.hint or "")
    assert server.requests == []
    online = make(server.url, tmp_path)
    online.load_index()
    online.read(MANIFEST, max_bytes=1 << 20)
    sha, _ = online.fetch_to("packages/acme/devtools/LICENSE", tmp_path / "a", max_bytes=100)
    # fetch.py stores fetched files as blobs; do the same so the offline copy can be found
    Cache(tmp_path / "cache").store_blob(sha, tmp_path / "a")
    seen = len(server.requests)
    offline = make(server.url, tmp_path, offline=True)
    assert offline.load_index().sha256 == online.load_index().sha256
    assert json.loads(offline.read(MANIFEST, max_bytes=1 << 20))["version"] == "1.2.0"
    assert (
        offline.fetch_to("packages/acme/devtools/LICENSE", tmp_path / "b", max_bytes=100)[0] == sha
    )
    assert len(server.requests) == seen + 1  # only the online load_index above


def test_parallel_fetches_share_one_client_through_faults(
    registry: Path, server: FaultServer, tmp_path: Path
) -> None:
    """The installer fetches with a thread pool: one source, many threads, flaky server."""
    root = registry / "packages/acme/devtools"
    files = sorted(p.relative_to(registry).as_posix() for p in root.rglob("*") if p.is_file())
    server.fail(r"\.ttl$", Fault("drop"), times=3)
    server.fail(r"\.md$", Fault("truncate"), times=1)
    server.storm(r"LICENSE$", 503, times=2, retry_after="0")
    src = make(server.url, tmp_path, retries=4, parallel=8)
    out = tmp_path / "out"
    out.mkdir()

    def one(i_rel: tuple[int, str]) -> tuple[str, str]:
        i, rel = i_rel
        sha, _ = src.fetch_to(rel, out / str(i), max_bytes=1 << 20)
        return rel, sha

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, enumerate(files * 4)))
    for i, (rel, sha) in enumerate(results):
        data = (registry / rel).read_bytes()
        assert sha == hashlib.sha256(data).hexdigest()
        assert (out / str(i)).read_bytes() == data
    src.close()


def test_drip_fed_body_is_abandoned(server: FaultServer, tmp_path: Path) -> None:
    """Each byte arrives inside the read timeout, but the transfer as a whole crawls."""
    server.fail(r"package\.json$", Fault("slow", chunk=1, seconds=0.05), times=None)
    with pytest.raises(NetworkError) as info:
        make(server.url, tmp_path, retries=1, timeout=0.3).read(MANIFEST, max_bytes=1 << 20)
    assert "slower than" in info.value.message
