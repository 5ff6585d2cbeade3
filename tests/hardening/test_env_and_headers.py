"""Issue 13 class 6 and the network deadline: every environment and header value we read.

Numeric ONTOSKILLS_* variables are usage errors (exit 2) naming the variable, for every
command (`--version` included); `[network]` values are bounded and finite; `Retry-After`
follows RFC 9110; a git ref or a publish version that git could not take is refused by name
before any git call; OS errors caused by registry file names exit 4 naming the package; a
stalled registry ends at the command's network deadline with exit 5, and retries are
announced on stderr.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ontoskills import envvars
from ontoskills.errors import UsageError
from ontoskills.sources._auth import Token, token_for
from ontoskills.sources._retry import Deadline, RetryPolicy, parse_retry_after
from ontoskills.sources.git import check_ref_component, ref_problem
from tests.conftest import REPO, CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case
from tests.helpers.faults import Fault, FaultServer
from tests.helpers.hostile import (
    EVIL,
    EVIL_ROOT,
    Case,
    build_hostile,
    chain,
    edit_manifest,
    write_raw,
)


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


BAD_NUMBERS = ["abc", "-1", "nan", "inf", "1e3", "1_000", "١٢", "²", "10s", "0x10", "9" * 40]


@pytest.mark.parametrize("name", sorted(envvars.VARS))
@pytest.mark.parametrize("raw", BAD_NUMBERS)
def test_every_bad_numeric_env_value_is_a_usage_error_naming_it(name: str, raw: str) -> None:
    with pytest.raises(UsageError) as info:
        envvars.check_all({name: raw})
    assert name in info.value.message and info.value.exit_code == 2
    assert info.value.hint and name in info.value.hint


def test_good_values_defaults_and_bounds() -> None:
    assert envvars.get(envvars.LOCK_TIMEOUT, {}) == 600
    assert envvars.get(envvars.LOCK_TIMEOUT, {envvars.LOCK_TIMEOUT: " "}) == 600  # empty: unset
    assert envvars.get(envvars.LOCK_TIMEOUT, {envvars.LOCK_TIMEOUT: "0"}) == 0
    assert envvars.get(envvars.RETRY_BASE, {envvars.RETRY_BASE: " 0.25 "}) == 0.25
    assert envvars.get_int(envvars.MAX_FILE_MB, {envvars.MAX_FILE_MB: "1"}) == 1
    for name, raw in ((envvars.MAX_FILE_MB, "0"), (envvars.MAX_FILE_MB, "1.5")):
        with pytest.raises(UsageError, match=name):  # 0 MiB would refuse every file
            envvars.get(name, {name: raw})
    with pytest.raises(UsageError, match=envvars.NETWORK_DEADLINE):
        envvars.get(envvars.NETWORK_DEADLINE, {envvars.NETWORK_DEADLINE: "0"})


def test_every_numeric_ontoskills_env_var_goes_through_envvars() -> None:
    """A new variable read with float()/int() straight from os.environ would bring back the
    traceback: every ONTOSKILLS_* read outside envvars.py must be a non-numeric one."""
    non_numeric = {
        "ONTOSKILLS_HOME", "ONTOSKILLS_LOCKFILE", "ONTOSKILLS_CACHE_DIR", "ONTOSKILLS_REGISTRY",
        "ONTOSKILLS_OFFLINE", "ONTOSKILLS_TOKEN", "ONTOSKILLS_DEBUG",
    }  # fmt: skip
    read = re.compile(
        r"environ(?:\.get)?\(\s*\"(ONTOSKILLS_[A-Z_]+)\"|getenv\(\"(ONTOSKILLS_[A-Z_]+)"
    )
    offenders = []
    for source in (REPO / "ontoskills").rglob("*.py"):
        for m in read.finditer(source.read_text(encoding="utf-8")):
            name = m.group(1) or m.group(2)
            if name not in non_numeric:
                offenders.append(f"{source.relative_to(REPO)}: {name}")
    assert not offenders, offenders


@pytest.mark.parametrize(
    ("name", "raw", "args"),
    [
        ("ONTOSKILLS_LOCK_TIMEOUT", "10s", ("--version",)),
        ("ONTOSKILLS_LOCK_TIMEOUT", "-1", ("list", "--json")),
        ("ONTOSKILLS_RETRY_BASE", "nan", ("--version",)),
        ("ONTOSKILLS_RETRY_MAX", "inf", ("list",)),
        ("ONTOSKILLS_NETWORK_DEADLINE", "soon", ("--help",)),
        ("ONTOSKILLS_MAX_FILE_MB", "١٢", ("--version",)),
        ("ONTOSKILLS_MAX_PACKAGE_MB", "0", ("doctor",)),
        ("ONTOSKILLS_ENCODER_THREADS", "many", ("search", "x")),
    ],
)
def test_cli_refuses_a_bad_env_value_before_any_command(
    cli: CliRunner, name: str, raw: str, args: tuple[str, ...]
) -> None:
    proc = cli(*args, extra_env={name: raw})
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert f"error: {name} must be" in proc.stderr and "hint:" in proc.stderr
    if "--json" in args:
        assert json.loads(proc.stdout)["error"]["exit_code"] == 2


@pytest.mark.parametrize(
    "line",
    ["timeout = nan", "timeout = inf", "timeout = 1e9", "deadline = -1", "deadline = nan",
     "retries = 1000000", "parallel = 0", 'deadline = "90"'],
)  # fmt: skip
def test_network_config_values_are_bounded(cli: CliRunner, env: dict[str, str], line: str) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f"[network]\n{line}\n")
    proc = cli("list")
    assert proc.returncode == 2, proc.stderr
    assert f"network.{line.split()[0]} must be a number" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ Retry-After (RFC 9110)

NOW = 784111777.0  # Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        (" 7\t", 7.0),  # optional whitespace around the field value
        ("0", 0.0),
        ("9" * 40, 1e12),  # absurd but well formed: capped by the policy, never an overflow
        ("Sun, 06 Nov 1994 08:50:37 GMT", 60.0),  # IMF-fixdate
        ("Sunday, 06-Nov-94 08:50:37 GMT", 60.0),  # obsolete RFC 850
        ("Sun Nov  6 08:50:37 1994", 60.0),  # obsolete asctime
        ("Sun, 06 Nov 1994 08:48:37 GMT", 0.0),  # in the past: retry now
        ("²", None),  # str.isdigit() says True, float() raises: was a traceback
        ("١٢", None),  # Arabic-Indic digits: not ASCII DIGIT
        ("-5", None),
        ("+5", None),
        ("5.5", None),
        ("1e3", None),
        ("0x10", None),
        ("soon", None),
        ("Sun, 06 Nov 1994 08:49:37 PST", None),  # HTTP-date is always GMT
        ("Sun, 31 Feb 1994 08:49:37 GMT", None),
        ("Sun, 06 Nov 1994 25:00:00 GMT", None),
        ("Sun, 06 Nov 1994 08:49:37 GMT; extra", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_follows_rfc_9110(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_retry_after_is_capped_by_the_policy() -> None:
    policy = RetryPolicy(retries=4, base=0.5, cap=30.0)
    assert policy.delay(0, parse_retry_after("9" * 40)) == 30.0
    assert policy.delay(60) <= 30.0  # a huge attempt number never overflows


def test_deadline_counts_from_the_first_request() -> None:
    deadline = Deadline(1000)
    assert 999 < deadline.remaining() <= 1000 and not deadline.expired
    assert Deadline(0.0).expired


# ------------------------------------------------------------------ network deadline


def _http_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"ONTOSKILLS_RETRY_BASE": "0.05", "ONTOSKILLS_RETRY_MAX": "0.2", **(extra or {})}


def test_registry_that_stalls_after_headers_ends_at_the_deadline(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """Headers then silence on every module: without a deadline this waited 5 attempts x
    the read timeout per file (> 3 minutes); now the command ends with exit 5 and says why."""
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.fail(r"\.ttl$", Fault("slow", seconds=600, chunk=64), times=None)
        proc = cli(
            "--allow-insecure-http",
            "--registry",
            srv.url,
            "install",
            EVIL,
            extra_env=_http_env({"ONTOSKILLS_NETWORK_DEADLINE": "2"}),
        )
    assert proc.returncode == 5, proc.stderr
    assert "network deadline of 2 s reached while fetching" in proc.stderr
    assert "ONTOSKILLS_NETWORK_DEADLINE" in proc.stderr  # the hint names the knob
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()


def test_network_deadline_from_config(cli: CliRunner, tmp_path: Path, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[network]\ndeadline = 1.5\ntimeout = 0.5\n")
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.fail(r"index\.json$", Fault("slow", seconds=600, chunk=64), times=None)
        proc = cli(
            "--allow-insecure-http", "--registry", srv.url, "install", EVIL, extra_env=_http_env()
        )
    assert proc.returncode == 5, proc.stderr
    assert "network deadline of 1.5 s" in proc.stderr
    # the read timeout (0.5 s) fired first: the retries before the deadline were announced
    warning = (
        r"warning: retrying http://127\.0\.0\.1:\d+/index\.json in [\d.]+ s "
        r"\(no data before the read timeout, ReadTimeout\), attempt 2/5"
    )
    assert re.search(warning, proc.stderr), proc.stderr


def test_retries_are_announced_on_stderr_and_converge(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.storm(r"index\.json$", 503, times=2, retry_after="0")
        srv.storm(r"ontoskill\.ttl$", 429, times=1, retry_after="²")  # isdigit(), not DIGIT
        proc = cli(
            "--allow-insecure-http", "--registry", srv.url, "install", EVIL, extra_env=_http_env()
        )
        json_run = cli(
            "--allow-insecure-http", "--registry", srv.url, "list", "--json", extra_env=_http_env()
        )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("warning: retrying")]
    assert re.fullmatch(
        r"warning: retrying http://127\.0\.0\.1:\d+/index\.json in 0\.0 s "
        r"\(503 Service Unavailable\), attempt 2/5",
        lines[0],
    ), lines
    assert "attempt 3/5" in lines[1]
    assert any("(429 Too Many Requests), attempt 2/5" in line for line in lines), lines
    assert json_run.returncode == 0 and json.loads(json_run.stdout)


# ------------------------------------------------------------------ git refs and versions


@pytest.mark.parametrize(
    "ref", ["a..b", "v1.lock", "x/.hidden", "trailing.", "a//b", "a@{1}", "-x", "a b", "a~1", "@"]
)
def test_invalid_git_ref_after_hash_is_refused_before_any_git_call(
    cli: CliRunner, ref: str
) -> None:
    # an unroutable host: reaching the network at all would be exit 5, not 2
    proc = cli("--registry", f"https://registry.invalid/reg.git#{ref}", "install", "a/b")
    assert proc.returncode == 2, proc.stderr
    assert "invalid git ref" in proc.stderr and "Traceback" not in proc.stderr


def test_ref_rules_match_git_check_ref_format() -> None:
    for good in ("main", "v1.2.0", "release/2.x", "1.0.0+build.7", "feature_x"):
        assert ref_problem(good) is None, good
    for bad in ("", "@", "a..b", "a.lock", "a/.b", "a/", "a.", "a:b", "a?", "a*", "a[", "a\\b"):
        assert ref_problem(bad) is not None, bad
    with pytest.raises(UsageError, match=re.escape("version '1.0.0-rc.lock'")):
        check_ref_component("1.0.0-rc.lock", "version")
    with pytest.raises(UsageError, match="contains '/'"):
        check_ref_component("1.0/2", "version")


@pytest.mark.parametrize("version", ["1.0.0-rc.lock", "1.0.0-rc..1", "1.0.0+x.lock"])
def test_publish_refuses_a_version_git_cannot_name_before_cloning(
    cli: CliRunner, tmp_path: Path, version: str
) -> None:
    from tests.publish.conftest import GIT_ENV, make_package

    pkg = make_package(tmp_path, version=version)
    with FaultServer(tmp_path / "empty") as srv:  # a remote that records any request
        proc = cli("publish", str(pkg), "--registry", srv.url + "reg.git", extra_env=GIT_ENV)
        assert srv.paths() == [], "refused before any git call"
    assert proc.returncode == 2, proc.stderr
    assert f"version {version!r}" in proc.stderr and "git ref" in proc.stderr


# ------------------------------------------------------------------ OS errors from registry names

LONG_NAME = "文" * 80  # 240 bytes: under the 255-byte segment limit
DEEP_PATH = "/".join([LONG_NAME] * 5) + "/x.md"  # 405 characters but 1,205 bytes


@pytest.mark.parametrize(
    "case",
    [
        Case(
            "case-collision",  # one file on macOS/Windows: the second silently replaced it
            4,
            mutate=chain(
                write_raw(f"{EVIL_ROOT}/Tool/notes.md", b"upper"),
                write_raw(f"{EVIL_ROOT}/tool/NOTES.md", b"lower"),
                edit_manifest(lambda m: m["modules"].clear()),
            ),
            stderr_has="cannot both be files",
        ),
        Case(
            "path-too-long-in-bytes",  # was installed; under a longer home, ENAMETOOLONG
            4,
            mutate=write_raw(f"{EVIL_ROOT}/{DEEP_PATH}", b"deep"),
            stderr_has="longer than 1024 bytes",
        ),
    ],
    ids=lambda c: c.id,
)
def test_registry_names_the_os_cannot_take_exit_4_naming_the_package(
    case: Case, cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(tmp_path / "reg", mutate=case.mutate)
    check_case(case, cli, tmp_path, reg, env)


def test_file_and_folder_collision_over_http(
    cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    """HTTP cannot list folders: the manifest names `tool` and `tool/ontoskill.ttl` and the
    server serves both. Creating one then the other was an OSError blamed on --home."""
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(
        tmp_path / "reg",
        mutate=edit_manifest(lambda m: m.__setitem__("files", [{"path": "tool"}])),
    )
    case = Case("file-and-folder", 4, stderr_has="evil/pkg/package.json")
    with FaultServer(reg) as srv:
        srv.fail(r"/tool$", Fault("raw", status=200, body=b"a file named like a folder"), None)
        check_case(case, cli, tmp_path, srv.url, env)
        proc = cli("--registry", srv.url, "install", EVIL)
    assert "cannot both be files" in proc.stderr and "--home" not in proc.stderr


def test_os_name_errors_while_staging_are_the_registrys(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """A package file the OS cannot create under this home (ENAMETOOLONG past 4,096 bytes)
    is reported against the package (exit 4), not as a problem with --home (exit 1)."""
    reg = build_hostile(tmp_path / "reg")
    deep = "/".join(["d" * 250] * 4) + ".md"  # 1,007 bytes: a valid registry path
    (reg / EVIL_ROOT / deep).parent.mkdir(parents=True)
    (reg / EVIL_ROOT / deep).write_text("x")
    home = tmp_path.joinpath(*(["h" * 250] * 13))  # ~3,300 bytes: fine for the home itself
    proc = cli("--registry", str(reg), "install", EVIL, extra_env={"ONTOSKILLS_HOME": str(home)})
    assert proc.returncode == 4, proc.stderr
    assert "evil/pkg: cannot create" in proc.stderr and "--home" not in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ tokens become headers


@pytest.mark.parametrize("token", ["tök", "a\nb", "a\r\nX-Injected: 1", "two words", "\t\x7f"])
def test_a_token_that_cannot_be_a_header_is_a_usage_error(token: str) -> None:
    reg = "https://registry.example/store/"
    with pytest.raises(UsageError) as info:
        token_for(reg + "index.json", reg, {"ONTOSKILLS_TOKEN": token})
    assert "ONTOSKILLS_TOKEN" in info.value.message and token not in info.value.message
    gh = "https://github.com/o/r.git"
    with pytest.raises(UsageError, match="GITHUB_TOKEN"):
        token_for(gh, gh, {"GITHUB_TOKEN": token})
    configured = frozenset({("https", "registry.example", 443)})
    assert token_for(
        reg + "x", reg, {"ONTOSKILLS_TOKEN": "  ghp_abc-123.x/y+z=  "}, configured
    ) == Token("ghp_abc-123.x/y+z=", "ONTOSKILLS_TOKEN")


def test_bad_token_over_http_is_exit_2_and_never_sent(cli: CliRunner, tmp_path: Path) -> None:
    """Was: an internal error (non-ASCII) or five doomed retries and exit 5 (a line break)."""
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        for token in ("tök", "a\r\nX-Injected: 1"):
            bad = {"ONTOSKILLS_TOKEN": token}
            proc = cli("--registry", srv.url, "install", EVIL, extra_env=bad)
            assert proc.returncode == 2, proc.stderr
            assert "ONTOSKILLS_TOKEN contains characters" in proc.stderr
            assert token not in proc.stderr
        assert srv.requests == []


@pytest.mark.parametrize("header", ["ETag", "Last-Modified"])
def test_a_non_ascii_validator_is_not_sent_back(
    cli: CliRunner, tmp_path: Path, env: dict[str, str], header: str
) -> None:
    """The server's ETag / Last-Modified is echoed in the next run's conditional request:
    a latin-1 value stored in the cache made every later run an internal error."""
    reg = build_hostile(tmp_path / "reg")
    body = (reg / "index.json").read_bytes()
    with FaultServer(reg) as srv:
        srv.fail(
            r"^/index\.json$",
            Fault("raw", status=200, headers={header: '"caf\xe9"'}, body=body),
            times=1,
        )
        first = cli("--registry", srv.url, "install", EVIL)
        second = cli("--registry", srv.url, "install", "acme/devtools")
        sent = [s.headers for s in srv.requests if s.path == "/index.json"]
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert "if-none-match" not in sent[-1] and "if-modified-since" not in sent[-1]
