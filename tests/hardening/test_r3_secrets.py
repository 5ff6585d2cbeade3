"""Issue 22 class 3: credentials are bound to origins and redacted on every output path.

* `ONTOSKILLS_TOKEN` goes only to the origins of registries the user configured (`registry
  add`, config.toml, the built-in one while it is in use) or listed in
  `ONTOSKILLS_TOKEN_FOR` (exact `scheme://host[:port]`); a host that only a lockfile or an
  ad-hoc `--registry` / `ONTOSKILLS_REGISTRY` names gets none, over HTTP or git.
* A registry URL with userinfo or a secret-looking query parameter is refused wherever a
  registry is built (registry add, config.toml, --registry, a lock used by `ci`), exit 2 (3
  for the lock), and shown redacted everywhere it is printed or written: `registry list`,
  `info`, the lock, `lock export`, errors, warnings.
* `serve --transport http --verbose` logs neither query strings nor session ids.

Every secret below is a distinctive string asserted to appear NOWHERE: stdout, stderr, the
lock, config.toml, the SBOM, the server's log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from ontoskills.commands._context import AppContext
from ontoskills.errors import AuthError, NetworkError, NotFoundError, OntoskillsError
from ontoskills.redact import redact_log, redact_url, url_secret
from tests.conftest import REPO, CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.githttp import GitHttpServer, bare_copy
from tests.helpers.httpserve import HttpServer, RawSession
from tests.helpers.registry import build_registry, commit_all, sample_packages

TOKEN = "s3cr3t-ONTO-token-8d1f"  # ONTOSKILLS_TOKEN
PASSWORD = "pw-userinfo-6b2e"  # user:password@ in a URL
QUERY = "qs-token-value-3c9a"  # ?token= in a URL
SIGNATURE = "amz-sig-value-0e7d"  # a presigned URL's signature
FAST = {"ONTOSKILLS_RETRY_BASE": "0.01", "ONTOSKILLS_RETRY_MAX": "0.05"}
SECRETS = (TOKEN, PASSWORD, QUERY, SIGNATURE)


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """What the verbs send, print and write: the CLI entry, in-process."""
    return cli_inproc


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def server(registry: Path):  # type: ignore[no-untyped-def]
    with FaultServer(registry) as srv:
        yield srv


def home(env: dict[str, str]) -> Path:
    return Path(env["ONTOSKILLS_HOME"])


def fresh_home(tmp_path: Path, name: str, lock: Path | None = None) -> dict[str, str]:
    """Another home and cache (nothing configured, nothing cached), holding `lock`."""
    root = tmp_path / name
    root.mkdir()
    if lock is not None:
        shutil.copyfile(lock, root / "ontoskills.lock")
    return {"ONTOSKILLS_HOME": str(root), "ONTOSKILLS_CACHE_DIR": str(tmp_path / f"{name}-c")}


def nowhere(*texts: str, files: tuple[Path, ...] = ()) -> None:
    """None of the secrets in any of the texts or files."""
    blob = "\n".join(texts) + "\n".join(p.read_text() for p in files if p.is_file())
    for secret in SECRETS:
        assert secret not in blob, f"{secret} leaked"


def authorized(srv: FaultServer) -> list[str]:
    return [s.path for s in srv.requests if "authorization" in s.headers]


def origin(url: str) -> str:
    return url.rstrip("/")


# ------------------------------------------------------------------------------------
# ONTOSKILLS_TOKEN is bound to configured (or consented) origins


def test_a_host_named_only_by_a_committed_lock_gets_no_token(
    cli: CliRunner, server: FaultServer, env: dict[str, str], tmp_path: Path
) -> None:
    cli("--registry", server.url, "install", "acme/devtools", check=True)
    server.requests.clear()
    # a clone of the project: its lock names the host, nothing configures it
    other = fresh_home(tmp_path, "clone", lock=home(env) / "ontoskills.lock")
    proc = cli("ci", extra_env={**other, "ONTOSKILLS_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    assert server.requests, "ci downloaded from the locked registry"
    assert authorized(server) == []
    nowhere(proc.stdout, proc.stderr, files=(Path(other["ONTOSKILLS_HOME"]) / "ontoskills.lock",))


@pytest.mark.parametrize("how", ["--registry", "ONTOSKILLS_REGISTRY"])
def test_an_adhoc_registry_gets_no_token(how: str, cli: CliRunner, server: FaultServer) -> None:
    extra = {"ONTOSKILLS_TOKEN": TOKEN}
    args: tuple[str, ...] = ("install", "acme/devtools")
    if how == "--registry":
        args = ("--registry", server.url, *args)
    else:
        extra["ONTOSKILLS_REGISTRY"] = server.url
    proc = cli(*args, extra_env=extra)
    assert proc.returncode == 0, proc.stderr
    assert server.requests and authorized(server) == []
    nowhere(proc.stdout, proc.stderr)


def test_a_401_from_an_unconfigured_host_says_how_to_consent(
    cli: CliRunner, server: FaultServer
) -> None:
    server.storm(r"^/index\.json$", 401, times=None)
    proc = cli("--registry", server.url, "install", "acme/devtools",
               extra_env={"ONTOSKILLS_TOKEN": TOKEN})  # fmt: skip
    assert proc.returncode == 6
    assert f"ONTOSKILLS_TOKEN_FOR={origin(server.url)}" in proc.stderr
    assert authorized(server) == []
    nowhere(proc.stdout, proc.stderr)


def test_a_configured_registry_gets_the_token_but_not_the_host_it_redirects_to(
    cli: CliRunner, registry: Path, server: FaultServer, env: dict[str, str], tmp_path: Path
) -> None:
    cli("registry", "add", "company", server.url, check=True)
    with FaultServer(registry) as cdn:
        # files on "another host" (localhost vs 127.0.0.1: another origin)
        server.redirect(r"^/packages/", cdn.url.replace("127.0.0.1", "localhost"))
        proc = cli("install", "acme/devtools", extra_env={"ONTOSKILLS_TOKEN": TOKEN})
        assert proc.returncode == 0, proc.stderr
        assert cdn.requests and authorized(cdn) == []
        assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
        nowhere(proc.stdout, proc.stderr, files=(home(env) / "ontoskills.lock",))
        # the same lock in a home that configured the same origin: ci sends it too
        server.requests.clear()
        cdn.requests.clear()
        other = fresh_home(tmp_path, "teammate", lock=home(env) / "ontoskills.lock")
        cli("registry", "add", "company", server.url, extra_env=other, check=True)
        cli("ci", extra_env={**other, "ONTOSKILLS_TOKEN": TOKEN}, check=True)
        assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
        assert cdn.requests and authorized(cdn) == []


def test_a_401_after_a_redirect_says_the_token_stays_home(
    cli: CliRunner, registry: Path, server: FaultServer
) -> None:
    cli("registry", "add", "company", server.url, check=True)
    with FaultServer(registry) as cdn:
        server.redirect(r"^/packages/", cdn.url.replace("127.0.0.1", "localhost"))
        cdn.storm(r"^/packages/", 401, times=None)
        proc = cli("install", "acme/devtools", extra_env={"ONTOSKILLS_TOKEN": TOKEN})
        assert authorized(cdn) == []
    assert proc.returncode == 6, proc.stderr
    assert "never follows a redirect" in proc.stderr
    nowhere(proc.stdout, proc.stderr)


def test_consent_sends_the_token_to_exactly_the_listed_origins(
    cli: CliRunner, server: FaultServer, tmp_path: Path
) -> None:
    port = server.url.rstrip("/").rsplit(":", 1)[1]
    not_it = (
        f"http://localhost:{port}",  # another host name for the same machine
        f"http://127.0.0.1:{int(port) + 1}",  # another port
        f"https://127.0.0.1:{port}",  # another scheme
    )
    for i, consent in enumerate((*not_it, ",".join(not_it))):
        server.requests.clear()
        extra = {**fresh_home(tmp_path, f"no{i}"), "ONTOSKILLS_TOKEN": TOKEN,
                 "ONTOSKILLS_TOKEN_FOR": consent}  # fmt: skip
        cli("--registry", server.url, "install", "acme/devtools", extra_env=extra, check=True)
        assert server.requests and authorized(server) == [], consent
    for i, consent in enumerate((origin(server.url), f" {server.url} , https://other.example ")):
        server.requests.clear()
        extra = {**fresh_home(tmp_path, f"yes{i}"), "ONTOSKILLS_TOKEN": TOKEN,
                 "ONTOSKILLS_TOKEN_FOR": consent}  # fmt: skip
        proc = cli("--registry", server.url, "install", "acme/devtools", extra_env=extra)
        assert proc.returncode == 0, proc.stderr
        assert all(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in server.requests)
        nowhere(proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    "value",
    [
        "127.0.0.1:8080",  # no scheme
        "http://127.0.0.1:8080/reg/",  # a path: an origin has none
        f"https://user:{PASSWORD}@reg.example.com",
        "https://reg.example.com/?x=1",
        "ftp://reg.example.com",
        "http://reg.example.com:99999",
        "http://reg.example.com:٨٠",  # non-ASCII digits
        "https://*.example.com",  # no wildcards: exact origins
        "https://reg.example.com,reg2.example.com",
    ],
)
def test_consent_takes_exact_origins_only(value: str, cli: CliRunner, server: FaultServer) -> None:
    proc = cli("--registry", server.url, "install", "acme/devtools",
               extra_env={"ONTOSKILLS_TOKEN": TOKEN, "ONTOSKILLS_TOKEN_FOR": value})  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "ONTOSKILLS_TOKEN_FOR" in proc.stderr and "scheme://host[:port]" in proc.stderr
    assert server.requests == []
    nowhere(proc.stdout, proc.stderr)


def test_the_builtin_registry_counts_only_while_it_is_in_use(
    cli: CliRunner, env: dict[str, str], registry: Path
) -> None:
    github = ("https", "github.com", 443)
    assert github in AppContext().source_options().token_origins
    cli("registry", "add", "company", "https://reg.example.com:8443/skills/", check=True)
    origins = AppContext().source_options().token_origins
    assert origins == {("https", "reg.example.com", 8443)}  # not github.com any more


@pytest.fixture
def git_remote(tmp_path: Path) -> Path:
    work = build_registry(tmp_path / "work", sample_packages())
    commit_all(work, "first")
    return bare_copy(work, tmp_path / "srv" / "reg.git")


def test_a_git_remote_named_only_by_the_lock_gets_no_credentials(
    cli: CliRunner, git_remote: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with GitHttpServer(git_remote.parent, token=TOKEN) as srv:
        url = srv.url_for("reg.git")
        cli("registry", "add", "store", url, check=True)
        cli("install", "acme/devtools", extra_env={"ONTOSKILLS_TOKEN": TOKEN}, check=True)
        assert any(r.authorization for r in srv.requests)  # configured: Basic auth
        srv.requests.clear()
        other = fresh_home(tmp_path, "clone", lock=home(env) / "ontoskills.lock")
        proc = cli("ci", extra_env={**other, "ONTOSKILLS_TOKEN": TOKEN})
        assert proc.returncode == 6, proc.stderr
        assert srv.requests and not any(r.authorization for r in srv.requests)
        assert "ONTOSKILLS_TOKEN_FOR=" in proc.stderr
        nowhere(proc.stdout, proc.stderr)
        consent = {"ONTOSKILLS_TOKEN": TOKEN, "ONTOSKILLS_TOKEN_FOR": origin(srv.url_for(""))}
        cli("ci", extra_env={**other, **consent}, check=True)


# ------------------------------------------------------------------------------------
# URLs with credentials: refused where persisted, redacted where shown

ADD_URLS = [
    f"https://user:{PASSWORD}@reg.example.com/skills/",
    f"https://{QUERY}@github.com/acme/registry.git",  # a token as the user name
    f"https://reg.example.com/skills/?token={QUERY}",
    f"https://reg.example.com/skills/?channel=stable&Access_Token={QUERY}",
    f"https://bucket.s3.amazonaws.com/reg/?X-Amz-Signature={SIGNATURE}&X-Amz-Credential={QUERY}",
    f"https://reg.example.com/skills/?api_key={QUERY}",
    f"https://reg.example.com/r.git?sig={SIGNATURE}",
    f"https://reg.example.com/skills/#access_token={QUERY}",
    f"ssh://git:{PASSWORD}@reg.example.com/r.git",
]


@pytest.mark.parametrize("url", ADD_URLS)
def test_registry_add_refuses_credentials_and_echoes_none(
    url: str, cli: CliRunner, env: dict[str, str]
) -> None:
    for json_flag in ((), ("--json",)):
        proc = cli("registry", "add", "company", url, *json_flag)
        assert proc.returncode == 2, proc.stderr
        assert "credentials" in proc.stderr and "ONTOSKILLS_TOKEN" in proc.stderr
        nowhere(proc.stdout, proc.stderr)
    assert not (home(env) / "config.toml").exists()


def test_an_adhoc_url_with_credentials_is_refused_before_any_request(
    cli: CliRunner, server: FaultServer, env: dict[str, str]
) -> None:
    base = server.url.replace("http://", f"http://user:{PASSWORD}@")
    for url in (f"{server.url}?token={QUERY}", f"{base}?token={QUERY}",
                f"{server.url}index.json?X-Amz-Signature={SIGNATURE}"):  # fmt: skip
        for extra, args in (({}, ("--registry", url)), ({"ONTOSKILLS_REGISTRY": url}, ())):
            proc = cli(*args, "install", "acme/devtools", "--json", extra_env=extra)
            assert proc.returncode == 2, proc.stderr
            assert "credentials" in proc.stderr
            nowhere(proc.stdout, proc.stderr)
    assert server.requests == []
    assert not (home(env) / "ontoskills.lock").exists()


def test_a_hand_edited_config_with_a_token_url_lists_nothing_secret(
    cli: CliRunner, env: dict[str, str]
) -> None:
    config = home(env) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[registries.x]\nurl = "https://reg.example.com/?token={QUERY}"\n')
    for args in (("registry", "list"), ("registry", "list", "--json")):
        proc = cli(*args)
        assert proc.returncode == 2
        assert "registries" in proc.stderr or "registry x" in proc.stderr
        nowhere(proc.stdout, proc.stderr)


def _edited_lock(cli: CliRunner, server: FaultServer, env: dict[str, str], url: str) -> Path:
    """A lock installed from `server`, then edited by hand to name `url` instead."""
    cli("--registry", server.url, "install", "acme/devtools", check=True)
    lock = home(env) / "ontoskills.lock"
    text = lock.read_text()
    assert f'url = "{server.url}"' in text
    lock.write_text(text.replace(f'url = "{server.url}"', f'url = "{url}"'))
    return lock


SECRET_URL = (
    f"https://deploy:{PASSWORD}@reg.example.com:8443/skills/"
    f"?channel=stable&token={QUERY}&X-Amz-Signature={SIGNATURE}"
)


def test_lock_export_of_a_hand_edited_lock_carries_no_secret(
    cli: CliRunner, server: FaultServer, env: dict[str, str], tmp_path: Path
) -> None:
    _edited_lock(cli, server, env, SECRET_URL)
    proc = cli("lock", "export", check=True)
    nowhere(proc.stdout, proc.stderr)
    sbom = json.loads(proc.stdout)
    (component,) = sbom["components"]
    (ref,) = component["externalReferences"]
    # what identifies the registry stays: host, port, path, the harmless parameter
    assert ref["url"].startswith("https://***@reg.example.com:8443/skills/?channel=stable&")
    assert "repository_url=" in component["purl"]
    out = tmp_path / "sbom.json"
    proc = cli("lock", "export", "--output", str(out), "--json", check=True)
    nowhere(proc.stdout, proc.stderr, files=(out,))
    proc = cli("lock", "export", "--json", check=True)
    nowhere(proc.stdout, proc.stderr)


def test_lock_export_redacts_a_git_registry_url_too(
    cli: CliRunner, server: FaultServer, env: dict[str, str]
) -> None:
    lock = _edited_lock(
        cli, server, env, f"https://{QUERY}@github.com/acme/reg.git?sig={SIGNATURE}"
    )
    lock.write_text(lock.read_text().replace('kind = "http"', 'kind = "git"'))
    proc = cli("lock", "export", check=True)
    nowhere(proc.stdout, proc.stderr)
    assert "github.com/acme/reg.git" in proc.stdout


def test_a_lock_with_credentials_is_refused_where_used_and_redacted_where_shown(
    cli: CliRunner, server: FaultServer, env: dict[str, str]
) -> None:
    lock = _edited_lock(cli, server, env, SECRET_URL)
    for args in (("info", "acme/devtools"), ("info", "acme/devtools", "--json")):
        proc = cli(*args, check=True)
        assert "reg.example.com:8443/skills/" in proc.stdout
        nowhere(proc.stdout, proc.stderr)
    shutil.rmtree(home(env) / "ontologies" / "author")  # ci must fetch: it uses the URL
    proc = cli("ci", extra_env={"ONTOSKILLS_TOKEN": TOKEN})
    assert proc.returncode == 3, proc.stderr
    assert str(lock) in proc.stderr and "credentials" in proc.stderr
    nowhere(proc.stdout, proc.stderr)
    # a verb that rewrites the lock never writes the credentials back
    cli("disable", "acme/devtools/reviewing", check=True)
    nowhere(files=(lock,))
    assert "reg.example.com:8443/skills/?channel=stable" in lock.read_text()


def test_a_redirect_to_a_presigned_url_never_shows_its_signature(
    cli: CliRunner, registry: Path, server: FaultServer
) -> None:
    with FaultServer(registry) as cdn:
        target = f"{cdn.url}packages/?X-Amz-Signature={SIGNATURE}&token={QUERY}#"
        server.redirect(r"^/packages/", target)
        cdn.storm(r"^/packages/", 503, times=None)
        proc = cli("--registry", server.url, "install", "acme/devtools", "--json",
                   extra_env=FAST)  # fmt: skip
    assert proc.returncode == 5, proc.stderr
    assert "retrying" in proc.stderr
    nowhere(proc.stdout, proc.stderr)


# ------------------------------------------------------------------------------------
# the one redaction helper, and every error goes through it


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/mareasw/ontostore.git",
        "https://github.com/acme/reg.git#v1.2.0",
        "git+https://host/reg.git#main",
        "git@github.com:acme/reg.git",
        "ssh://git@github.com/acme/reg.git",
        "https://reg.example.com/skills/?channel=stable&keyword=x&author=acme",
        "/home/me/registry?token=not-a-url",
        "http://[::1]:8080/reg/",
        "https://[bad/",
    ],
)
def test_clean_urls_are_left_exactly_as_they_are(url: str) -> None:
    assert redact_url(url) is url and url_secret(url) is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://u:{PASSWORD}@h/r/", "https://***@h/r/"),
        (f"https://{QUERY}@h/r.git", "https://***@h/r.git"),
        (f"https://h/r/?a=1&token={QUERY}&b=2", "https://h/r/?a=1&token=***&b=2"),
        (f"https://h/?X-Amz-Signature={SIGNATURE}", "https://h/?X-Amz-Signature=***"),
        (f"https://h/?X-Goog-Credential={QUERY}", "https://h/?X-Goog-Credential=***"),
        (f"https://h/?sessionid={QUERY}&SIG={SIGNATURE}", "https://h/?sessionid=***&SIG=***"),
        (f"https://h/?code={QUERY}&clientSecret={QUERY}", "https://h/?code=***&clientSecret=***"),
        (f"https://h/cb#access_token={QUERY}&x=1", "https://h/cb#access_token=***&x=1"),
        (f"ssh://git:{PASSWORD}@h/r.git", "ssh://***@h/r.git"),
        (f"https://u:{PASSWORD}@[bad/?token={QUERY}", "https://***@[bad/?token=***"),
    ],
)
def test_credentials_are_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert url_secret(url) is not None
    for secret in SECRETS:
        assert secret not in (url_secret(url) or "")


@pytest.mark.parametrize("kind", [OntoskillsError, NotFoundError, NetworkError, AuthError])
def test_every_error_message_and_hint_is_redacted(kind: type[OntoskillsError]) -> None:
    err = kind(
        f"index.json not found (https://u:{PASSWORD}@127.0.0.1:9/?token={QUERY}, HTTP 404)",
        hint=f"check https://h/reg/?X-Amz-Signature={SIGNATURE}.",
    )
    assert "https://***@127.0.0.1:9/?token=***, HTTP 404)" in err.message
    assert err.hint == "check https://h/reg/?X-Amz-Signature=***."
    nowhere(str(err), err.message, err.hint or "", repr(err))


def test_an_internal_error_naming_a_url_is_redacted(
    cli: CliRunner, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ontoskills.commands import registry as registry_cmd

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"could not reach https://u:{PASSWORD}@h/?token={QUERY}")

    monkeypatch.setattr(registry_cmd, "is_valid_name", boom)
    proc = cli("registry", "add", "x", "https://reg.example.com/", "--json")
    assert proc.returncode == 1 and "internal error" in proc.stderr
    nowhere(proc.stdout, proc.stderr)


def test_log_lines_lose_queries_session_ids_and_bearer_tokens() -> None:
    sid = "0123456789abcdef0123456789abcdef"
    lines = {
        f'127.0.0.1:5 - "POST /mcp?token={QUERY} HTTP/1.1" 200': '"POST /mcp HTTP/1.1" 200',
        f"Created new transport with session ID: {sid}": "session ID: ***",
        f"Rejected request with unknown or expired session ID: client {QUERY}": "ID: ***",
        f"Session {sid} idle timeout": "Session *** idle timeout",
        f"headers: authorization: Bearer {TOKEN}": "authorization: ***",
        f"sending Bearer {TOKEN} to x": "Bearer ***",
        f"GET https://u:{PASSWORD}@h/x?sig={SIGNATURE}": "GET https://***@h/x",
    }
    for line, expected in lines.items():
        shown = redact_log(line)
        assert expected in shown, shown
        nowhere(shown)
        assert sid not in shown


# ------------------------------------------------------------------------------------
# serve --transport http --verbose


def test_serve_http_verbose_logs_no_query_token_nor_session_id(env: dict[str, str]) -> None:
    import os

    home(env).mkdir(parents=True, exist_ok=True)
    unknown = f"client-session-{QUERY}"

    async def body(url: str) -> str:
        async with httpx.AsyncClient(timeout=30) as client:
            session = RawSession(client, f"{url}?token={QUERY}&access_token={SIGNATURE}")
            await session.open()
            assert session.session_id
            await session.request("tools/list")
            headers = {**session.session_headers(), "mcp-session-id": unknown}
            stale = await client.post(url, headers=headers, content=b"{}")
            assert stale.status_code in (400, 404)
            await session.close()
            return session.session_id

    serve_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    with HttpServer(serve_env, "--verbose") as server:
        sid = anyio.run(body, server.url)
        assert server.stop() == 0
    log = server.stderr
    assert "POST /mcp" in log  # the access log is on, and shows the path
    assert sid not in log and unknown not in log
    nowhere(log)
