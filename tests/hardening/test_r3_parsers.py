"""Issue 22 classes 4 and 5: every parser bounded, every untrusted stream bounded.

Class 4: a hostile nesting (3,000-deep arrays, inline tables, dotted keys, YAML indentation)
in the lock, config.toml, a goose or Codex client config or SKILL.md frontmatter is the
documented exit code of that file (3 lock, 2 config, 4 a client file or SKILL.md), one
`error:` line, never an internal error; a Codex config holding an inline table is merged
into; a stdio server answers every line it cannot use and keeps serving.
Class 5: a stdio line over the limit is dropped while it streams and answered; YAML aliases
count as what they expand to; a SKILL.md is size-checked before it is read; every string of
a lock (its registry URL first) is length-limited when the lock is parsed.

Everything through the real entry: the CLI in a subprocess, the stdio server over raw pipes.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import filelock
import pytest

from ontoskills import limits
from ontoskills.server import authormd
from tests.conftest import CliRunner
from tests.server.rawclient import RawServer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEEP = 3000
ARRAYS = "[" * DEEP + "]" * DEEP
INLINE = "{a = " * DEEP + "1" + "}" * DEEP
DOTTED = ".".join(["a"] * DEEP) + " = 1"


def _refused(proc: object, code: int) -> str:
    """The one-line refusal contract: the exit code, `error:` + `hint:`, no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)  # type: ignore[attr-defined]
    err: str = proc.stderr  # type: ignore[attr-defined]
    assert "internal error" not in err and "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, err
    assert "hint:" in err, err
    return lines[0]


# ------------------------------------------------------------------ class 4: lock, config
@pytest.mark.parametrize(
    "body",
    [f"x = {ARRAYS}", f"x = {INLINE}", DOTTED, f"[{'.'.join(['t'] * DEEP)}]\nx = 1"],
    ids=["arrays", "inline-tables", "dotted-keys", "table-header"],
)
def test_a_deeply_nested_lock_is_exit_3(cli: CliRunner, tmp_path: Path, body: str) -> None:
    lock = tmp_path / "ontoskills.lock"
    lock.write_text(f"lock_version = 1\n{body}\n")
    line = _refused(cli("--lockfile", str(lock), "list"), 3)
    assert "nested deeper than" in line and str(lock) in line
    _refused(cli("--lockfile", str(lock), "lock", "export"), 3)


@pytest.mark.parametrize("body", [f"x = {ARRAYS}", f"x = {INLINE}"], ids=["arrays", "inline"])
def test_a_deeply_nested_config_is_exit_2(cli: CliRunner, env: dict[str, str], body: str) -> None:
    config = Path(env["ONTOSKILLS_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(body + "\n")
    line = _refused(cli("list"), 2)
    assert "config.toml" in line and "nested deeper than" in line


def test_brackets_in_strings_and_comments_are_not_nesting(
    cli: CliRunner, env: dict[str, str]
) -> None:
    """The scan before parsing skips strings (all four kinds) and comments: a config
    full of brackets there, and an array of 100 shallow items, is an ordinary config."""
    config = Path(env["ONTOSKILLS_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    many = "[" * 100
    config.write_text(
        f'a = "{many}"  # {many}\nb = \'{many}\'\nc = """\n{many}\\""" """\n'
        f"d = '''{many}'''\ne = [{'[1], ' * 100}]\n"
    )
    proc = cli("list")
    assert proc.returncode == 0, proc.stderr


def test_dotted_keys_in_config_are_refused_before_anything_writes_them_back(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    """tomllib builds `a.a.a...` without recursing; writing config.toml back (tomli_w) did
    recurse: `registry add` ended in an internal error. Now refused on read, file kept."""
    config = Path(env["ONTOSKILLS_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(DOTTED + "\n")
    reg = tmp_path / "reg"
    reg.mkdir()
    _refused(cli("registry", "add", "mine", str(reg)), 2)
    assert config.read_text() == DOTTED + "\n"


# ---------------------------------------------------------------- class 4: client configs
def _mcp_config(cli: CliRunner, user: Path, *args: str) -> object:
    return cli(
        "mcp-config",
        *args,
        extra_env={"HOME": str(user), "XDG_CONFIG_HOME": str(user / ".config")},
    )


@pytest.mark.parametrize(
    "body",
    [
        f"extensions: {ARRAYS}\n",
        "extensions:\n" + "".join("  " * i + "k:\n" for i in range(1, 600)),
        "extensions: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n",
    ],
    ids=["flow", "block-indent", "flow-mapping"],
)
def test_a_deeply_nested_goose_config_is_exit_4_untouched(
    cli: CliRunner, tmp_path: Path, body: str
) -> None:
    user = tmp_path / "user"
    path = user / ".config" / "goose" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(body)
    line = _refused(_mcp_config(cli, user, "--client", "goose"), 4)
    assert "config.yaml" in line and "nested deeper than" in line
    assert path.read_text() == body
    assert not path.with_name("config.yaml.bak").exists()


@pytest.mark.parametrize(
    "body",
    ["mcp_servers = { ontoskills = [1, 2] }\n", 'mcp_servers = { ontoskills = "x", other = 1 }\n'],
    ids=["array", "string"],
)
def test_a_codex_inline_table_is_merged_into(cli: CliRunner, tmp_path: Path, body: str) -> None:
    """`mcp_servers = { ... }` may hold only inline tables: tomlkit's ValueError on a table
    put there was an internal error; our entry now goes in as an inline table."""
    project = tmp_path / "project"
    path = project / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(body)
    proc = _mcp_config(
        cli, tmp_path / "user", "--client", "codex", "--project", "--dir", str(project)
    )
    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert servers["ontoskills"]["args"][-1] == "serve"
    assert servers.get("other", 1) == 1
    assert path.with_name("config.toml.bak").read_text() == body


def test_a_deeply_nested_codex_config_is_exit_4(cli: CliRunner, tmp_path: Path) -> None:
    project = tmp_path / "project"
    path = project / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(f"x = {ARRAYS}\n")
    line = _refused(
        _mcp_config(
            cli, tmp_path / "user", "--client", "codex", "--project", "--dir", str(project)
        ),
        4,
    )
    assert "nested deeper than" in line


# ----------------------------------------------------------------------- SKILL.md (pack)
def _skill_src(root: Path, front: str, body: str = "Body.\n") -> Path:
    folder = root / "src" / "s1"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: s1\ndescription: d\n{front}\n---\n{body}")
    return root / "src"


@pytest.mark.parametrize(
    "front",
    [f"intents: {ARRAYS}", "metadata:\n" + "".join("  " * i + "k:\n" for i in range(1, 200))],
    ids=["flow", "block-indent"],
)
def test_deep_skill_md_frontmatter_is_exit_4(cli: CliRunner, tmp_path: Path, front: str) -> None:
    src = _skill_src(tmp_path, front)
    line = _refused(cli("pack", str(src), "--from-skill-md", "--id", "acme/p"), 4)
    assert "s1/SKILL.md" in line and "nested deeper than" in line
    assert not (src / "s1" / "ontoskill.ttl").exists()


# ------------------------------------------------------------ class 5: YAML alias budget
def test_yaml_aliases_count_as_what_they_expand_to(cli: CliRunner, tmp_path: Path) -> None:
    """10,000 aliases of one 2 KB scalar: 20 MB of intents from 42 KB of frontmatter (a
    billion laughs in small). Before, `pack` wrote them all into a 20 MB Turtle module."""
    aliases = ", ".join(["*x"] * 10_000)
    src = _skill_src(tmp_path, f"x: &x {'y' * 2000}\nintents: [{aliases}]")
    line = _refused(cli("pack", str(src), "--from-skill-md", "--id", "acme/p"), 4)
    assert "once its aliases are expanded" in line
    assert not (src / "s1" / "ontoskill.ttl").exists()


def test_a_few_aliases_within_the_budget_still_pack(cli: CliRunner, tmp_path: Path) -> None:
    src = _skill_src(tmp_path, "intents: &i [lint code, check style]\naliases: *i")
    proc = cli("pack", str(src), "--from-skill-md", "--id", "acme/p")
    assert proc.returncode == 0, proc.stderr
    assert "lint code" in (src / "s1" / "ontoskill.ttl").read_text()


def test_served_frontmatter_refuses_an_alias_bomb_and_a_cycle() -> None:
    """The Skills extension serves an author's frontmatter as JSON: never an expansion of
    aliases (each copy a full string in the reply), never a cycle."""
    bomb = (
        "---\nname: s1\ndescription: d\nx: &x "
        + "y" * 1000
        + "\nl: ["
        + ", ".join(["*x"] * 5_000)
        + "]\n---\nBody\n"
    )
    assert authormd.frontmatter_of(bomb.encode(), "s1") is None
    cycle = b"---\nname: s1\ndescription: d\nl: &l [*l]\n---\nBody\n"
    assert authormd.frontmatter_of(cycle, "s1") is None
    fine = b"---\nname: s1\ndescription: d\nx: &x [a]\ny: *x\n---\nBody\n"
    assert authormd.frontmatter_of(fine, "s1") == {
        "name": "s1",
        "description": "d",
        "x": ["a"],
        "y": ["a"],
    }


# --------------------------------------------------------------- class 5: SKILL.md size
def test_a_skill_md_over_its_limit_is_refused_before_it_is_read(
    cli: CliRunner, tmp_path: Path
) -> None:
    """A sparse 1 GiB SKILL.md (no disk): refused from fstat, never read whole (it cost
    1 GiB of RSS, then 'over the per-file limit'); one just over 4 MiB is refused too."""
    src = _skill_src(tmp_path, "")
    with open(src / "s1" / "SKILL.md", "r+b") as fh:
        fh.truncate(1 << 30)
    line = _refused(cli("pack", str(src), "--from-skill-md", "--id", "acme/p"), 4)
    assert "s1/SKILL.md" in line and str(limits.MAX_SKILL_MD_BYTES) in line
    with open(src / "s1" / "SKILL.md", "r+b") as fh:
        fh.truncate(limits.MAX_SKILL_MD_BYTES + 1)
    _refused(cli("pack", str(src), "--from-skill-md", "--id", "acme/p"), 4)


# --------------------------------------------------------------- class 5: lock strings
def _lock_with_url(path: Path, url: str) -> None:
    path.write_text(
        'lock_version = 1\n[registries.r]\nkind = "http"\n'
        f'url = "{url}"\n[packages."acme/x"]\nversion = "1.0.0"\nregistry = "r"\n'
        'trust_tier = "community"\nrequested = ["acme/x"]\nroot = "packages/acme/x"\n'
        '[[packages."acme/x".files]]\npath = "a.ttl"\n'
        f'sha256 = "{"0" * 64}"\nsize = 1\nexecutable = false\n'
    )


@pytest.mark.parametrize("length", [limits.MAX_LOCK_STRING + 1, 64 * 1024])
def test_a_long_lock_url_is_exit_3_before_any_validator(
    cli: CliRunner, tmp_path: Path, length: int
) -> None:
    lock = tmp_path / "ontoskills.lock"
    url = "https://example.com/"
    _lock_with_url(lock, url + "a" * (length - len(url)))
    line = _refused(cli("--lockfile", str(lock), "lock", "export"), 3)
    assert f"at most {limits.MAX_LOCK_STRING}" in line
    _refused(cli("--lockfile", str(lock), "list"), 3)


def test_a_lock_url_at_the_limit_still_exports(cli: CliRunner, tmp_path: Path) -> None:
    lock = tmp_path / "ontoskills.lock"
    url = "https://example.com/"
    _lock_with_url(lock, url + "a" * (limits.MAX_LOCK_STRING - len(url)))
    proc = cli("--lockfile", str(lock), "lock", "export")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["components"]


# ------------------------------------------------------------------- the stdio server
def _serve(tmp_path: Path, line_limit: int | None = None) -> RawServer:
    env = {
        "ONTOSKILLS_HOME": str(tmp_path / "home"),
        "ONTOSKILLS_CACHE_DIR": str(tmp_path / "cache"),
        "CI": "true",
        "NO_COLOR": "1",
    }
    entry: tuple[str, ...] = ("-m", "ontoskills")
    if line_limit is not None:  # the same entry, with a line limit a test can afford
        entry = (
            "-c",
            "import ontoskills.server.runner as r; "
            f"r.MAX_LINE_BYTES = {line_limit}; "
            "from ontoskills.cli import main; main()",
        )
    server = RawServer(env, "serve", entry=entry)
    server.initialize("2025-06-18")
    return server


def _still_serving(server: RawServer) -> None:
    assert "result" in server.request("tools/list")
    assert server.request("ping")["result"] == {}


def _close_clean(server: RawServer) -> None:
    assert server.close() == 0
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in server.raw)
    assert "Traceback" not in server.stderr.decode()


PING = '{"jsonrpc":"2.0","id":%s,"method":"ping"%s}\n'


@pytest.mark.parametrize(
    ("line", "want_id", "code"),
    [
        # deep and undecodable: our own screen's json.loads hit RecursionError, and the
        # reader thread died with the server
        (PING % (5, ',"params":{"a":' + "[" * DEEP + '"\\ud800"' + "]" * DEEP + "}"), None, -32700),
        # ids the SDK took for a notification and never answered
        (PING % ("1e999999", ""), None, -32600),
        (PING % ("1.5", ""), None, -32600),
        (PING % ("null", ""), None, -32600),
        (PING % ("[1]", ""), None, -32600),
        # numbers JSON cannot hold reach no handler: the request's own id, -32602
        (PING % (6, ',"params":{"a":1e999999}'), 6, -32602),
        (PING % (7, ',"params":{"a":NaN}'), 7, -32602),
        (PING % (8, ',"params":{"a":[-Infinity]}'), 8, -32602),
    ],
    ids=["deep-surrogate", "id-inf", "id-float", "id-null", "id-array", "inf", "nan", "-inf"],
)
def test_every_line_is_answered_and_serving_goes_on(
    tmp_path: Path, line: str, want_id: object, code: int
) -> None:
    server = _serve(tmp_path)
    server.write(line.encode())
    reply = server.read()
    assert reply["id"] == want_id and reply["error"]["code"] == code, reply
    _still_serving(server)
    _close_clean(server)


def test_a_finite_exponent_and_the_words_nan_and_infinity_in_strings_pass(
    tmp_path: Path,
) -> None:
    server = _serve(tmp_path)
    server.write((PING % (9, ',"params":{"a":1e100,"b":"NaN Infinity 1e999999"}')).encode())
    assert server.read() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    _close_clean(server)


def test_a_line_over_the_limit_is_dropped_while_it_streams(tmp_path: Path) -> None:
    """Limit 1 MiB here (16 MiB in a real run, docs/SERVER.md): a 2 MB line is answered
    with -32600 (id null) and the request written right behind it in the same burst is
    served; a line just under the limit is parsed as usual."""
    limit = 1 << 20
    server = _serve(tmp_path, line_limit=limit)
    head = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":"'
    server.write(head + b"x" * (2 * limit) + b'"}}\n' + (PING % (6, "")).encode())
    refused = server.read()
    assert refused["id"] is None and refused["error"]["code"] == -32600, refused
    assert str(limit) in refused["error"]["message"]
    assert server.read() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    under = head + b"x" * (limit - len(head) - 8) + b'"}}\n'
    server.write(under)
    assert server.read() == {"jsonrpc": "2.0", "id": 5, "result": {}}
    _still_serving(server)
    # a line over the limit that never ends: the input ends, the server exits cleanly
    server.write(head + b"x" * (2 * limit))
    _close_clean(server)
    assert server.raw[-1].startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600')


def test_a_pyo3_panic_in_the_parser_is_a_parse_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """pydantic-core panics surface as pyo3's PanicException, a BaseException: the SDK's
    reader (`except Exception`) let one end the server. No input is known to panic today,
    so this one case stands in a parser that panics, in-process, at the one call site."""
    import mcp_types

    from ontoskills.server import runner

    class PanicException(BaseException):  # pyo3's own name
        pass

    class Panicking:
        def validate_json(self, *args: object, **kwargs: object) -> object:
            raise PanicException("called `Option::unwrap()` on a `None` value")

    monkeypatch.setattr(mcp_types, "jsonrpc_message_adapter", Panicking())
    item = runner._message(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert isinstance(item, runner._Refused) and item.code == -32700
    reply = runner._wire_error(item)
    assert reply.id is None and reply.error.code == -32700


# ------------------------------------------- JSON we wrote, read back from an edited home
def test_a_planted_deep_lock_cache_is_rebuilt_not_a_crash(
    cli: CliRunner, env: dict[str, str]
) -> None:
    """The parsed-lock cache under state/derived is ours, but the home is anyone's: 3,000
    `[` there raised RecursionError past every `except ValueError` (internal error)."""
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir()
    lock = home / "ontoskills.lock"
    lock.write_text("lock_version = 1\n")
    cache = home / "state" / "derived" / "lock-cache"
    cache.mkdir(parents=True)
    (cache / f"{hashlib.sha256(lock.read_bytes()).hexdigest()}.v3.json").write_text(ARRAYS)
    proc = cli("search", "lint code")
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr


def test_a_planted_deep_lock_owner_file_still_names_the_wait(
    cli: CliRunner, env: dict[str, str]
) -> None:
    """The owner file beside the home lock (at most 4 KB, read only to say who holds the
    lock): 4,000 `[` made a busy home an internal error instead of exit 1 with the wait."""
    state = Path(env["ONTOSKILLS_HOME"]) / "state"
    state.mkdir(parents=True)
    (state / "home.owner").write_text("[" * 4000)  # within its 4 KB bound
    with filelock.FileLock(str(state / "home.lock")):
        proc = cli("remove", "acme/x", extra_env={"ONTOSKILLS_LOCK_TIMEOUT": "0"})
    line = _refused(proc, 1)
    assert "is locked by pid ?" in line
