"""Token-to-host rules, plain-http policy, Retry-After parsing and backoff bounds."""

from __future__ import annotations

import email.utils
import time

import pytest

from ontoskills.errors import NetworkError, UsageError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig
from ontoskills.sources import SourceOptions, open_source
from ontoskills.sources._auth import (
    Token,
    check_transport,
    is_loopback,
    token_for,
    token_origins,
)
from ontoskills.sources._retry import RetryPolicy, parse_retry_after

ENV = {"ONTOSKILLS_TOKEN": "own", "GITHUB_TOKEN": "gh"}


def test_ontoskills_token_only_for_the_registry_host() -> None:
    reg = "https://registry.example.org/store/"
    configured = token_origins([reg], {"_": ""})  # the registry is configured
    own = token_for(reg + "index.json", reg, ENV, configured)
    assert own == Token("own", "ONTOSKILLS_TOKEN")
    assert token_for(reg + "index.json", reg, ENV) is None  # not configured: withheld
    assert token_for("https://cdn.example.org/x", reg, ENV, configured) is None
    assert token_for("https://registry.example.org.evil.com/x", reg, ENV, configured) is None


def test_github_token_only_for_github_hosts() -> None:
    only_gh = {"GITHUB_TOKEN": "gh"}
    for url in (
        "https://github.com/o/r.git",
        "https://api.github.com/repos/o/r",
        "https://raw.githubusercontent.com/o/r/main/index.json",
    ):
        assert token_for(url, url, only_gh) == Token("gh", "GITHUB_TOKEN")
    assert token_for("https://gitlab.com/o/r.git", "https://gitlab.com/o/r.git", only_gh) is None
    evil = "https://githubusercontent.com.evil.io/x"
    assert token_for(evil, evil, only_gh) is None
    # redirect from github.com to a githubusercontent host: a different host, no token
    cdn = "https://objects.githubusercontent.com/x"
    assert token_for(cdn, "https://github.com/o/r", only_gh) is None


def test_token_repr_hides_the_secret() -> None:
    assert "own" not in repr(Token("own", "ONTOSKILLS_TOKEN"))


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.1.2.3", "localhost", "[::1]", "::1", "a.localhost"]
)
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["example.org", "10.0.0.1", "0.0.0.0", "localhost.example.org"])
def test_non_loopback_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_plain_http_rules() -> None:
    check_transport("http://127.0.0.1:8080/", False)
    check_transport("http://[::1]:8080/", False)
    check_transport("https://example.org/", False)
    check_transport("http://example.org/", True)
    with pytest.raises(UsageError, match="plain http"):
        check_transport("http://example.org/", False)
    with pytest.raises(UsageError):
        check_transport("ftp://example.org/", True)


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("7") == 7.0
    now = time.time()
    future = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= (parse_retry_after(future, now=now) or 0) <= 31
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after(past, now=now) == 0.0
    for junk in (None, "", "soon", "-5", "1.5e9"):
        assert parse_retry_after(junk) is None


def test_backoff_grows_with_jitter_and_respects_the_cap() -> None:
    policy = RetryPolicy(retries=4, base=1.0, cap=5.0)
    for attempt in range(4):
        delay = policy.delay(attempt)
        full = min(5.0, 2.0**attempt)
        assert full / 2 - 1e-9 <= delay <= full + 1e-9
    assert policy.delay(10) <= 5.0
    assert policy.delay(0, retry_after=3600) == 5.0  # a hostile Retry-After is capped
    assert policy.delay(0, retry_after=2) == 2


def test_retry_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONTOSKILLS_RETRY_BASE", "0.01")
    monkeypatch.delenv("ONTOSKILLS_RETRY_MAX", raising=False)
    policy = RetryPolicy.from_env(3)
    assert (policy.retries, policy.base, policy.cap) == (3, 0.01, 30.0)
    # a malformed value is a usage error naming it, never a silent default
    monkeypatch.setenv("ONTOSKILLS_RETRY_MAX", "bogus")
    with pytest.raises(UsageError, match="ONTOSKILLS_RETRY_MAX"):
        RetryPolicy.from_env(3)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://127.0.0.1:9/reg.git"])
def test_unreachable_host_is_network_error(
    url: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONTOSKILLS_RETRY_BASE", "0.01")
    kind = "git" if url.endswith(".git") else "http"
    opts = SourceOptions(cache=Cache(tmp_path / "cache"), retries=1, timeout=2)  # type: ignore[operator]
    with pytest.raises(NetworkError) as info:
        open_source(RegistryConfig("r", url, kind), opts).load_index()
    assert "127.0.0.1" in info.value.message
