"""Third hardening round (issue 22), classes 9 and 10 and the emoji item.

Class 9, values written into another program's format are encoded for it: `mcp-config`
never writes a home, lockfile, command or URL that the client would expand into another
path (`${HOME}` for Claude Code, `$HOME` for Gemini CLI, `{env:HOME}` for opencode, ...):
exit 2 naming the value, nothing written; clients that read values as written get them as
written. `lock export` turns every lock URL into a valid CycloneDX reference (the scp form
`git@host:org/repo.git` -> `ssh://git@host/org/repo.git`) instead of failing the whole lock.

Class 10, ASCII digits only: `--threshold root=²`, `root=١٦`, `--expires timestamp=٣d`,
versions `١.٠.١` / `𝟏.𝟎.𝟐`, a 5,000-digit version part, a registry port `:١٢`, an MCP cursor
`١` are all refused (exit 2 / invalid params), through the one helper `ontoskills/asciinum.py`;
a grep keeps `isdigit(`, `isdecimal(`, `isnumeric(` and `\\d` out of the package.

Emoji: VS15/VS16 after a code point with the Emoji property (emoji-data.txt) is an emoji
presentation sequence, not hidden text: `ℹ️` (U+2139, category Ll) no longer warns on every
install of three anthropics packages; a VS16 after a plain letter still does.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import yaml
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from mcp.shared.exceptions import MCPError
from packageurl import PackageURL

from ontoskills import lockfile
from ontoskills.lockfile import LockedFile
from ontoskills.publish.registry import init_registry
from ontoskills.safety import find_hidden_unicode, is_emoji
from ontoskills.server.prompts import offset_cursor
from tests.conftest import REPO, CliRunner, shared_path
from tests.helpers.hostile import EVIL, EVIL_ROOT, build_hostile, hidden_turtle, write_raw
from tests.publish.conftest import make_package, tree_state

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """What the verbs do and print: the CLI entry in-process (tests/helpers/inproc.py)."""
    return cli_inproc


def _one_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2 with one `error:` line (holding each needle), then one `hint:` line (a
    progress line may come before them)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    assert len(errors) == 1 and lines[errors[0] + 1 :][:1] != [], lines
    error, hint = lines[errors[0]], lines[errors[0] + 1]
    assert hint.startswith("hint: ") and errors[0] + 2 == len(lines), lines
    for needle in needles:
        assert needle in error, (needle, error)
    return error


# ------------------------------------------------------------- class 9: mcp-config values

# client -> what its docs (or source) say it substitutes in a path we would write
EXPANDING = {
    "claude": "${HOME}",
    "cursor": "${env:HOME}",
    "vscode": "${userHome}",
    "windsurf": "${env:HOME}",
    "cline": "${env:HOME}",
    "gemini": "$HOME",
    "opencode": "{env:HOME}",
}
LITERAL = ("claude-desktop", "codex", "zed", "goose")  # they read these values as written


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    user, project = tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    return user, project


def _mcp_config(  # type: ignore[no-untyped-def]
    cli: CliRunner, dirs: tuple[Path, Path], home: Path | None, *args: str
):
    """`ontoskills [--home HOME] mcp-config --dir PROJECT ARGS` with HOME=user."""
    user, project = dirs
    env = {"HOME": str(user), "XDG_CONFIG_HOME": str(user / ".config"), "APPDATA": str(user)}
    first = ("--home", str(home)) if home is not None else ()
    return cli(*first, "mcp-config", "--dir", str(project), *args, extra_env=env)


def _home_with(tmp_path: Path, fragment: str) -> Path:
    home = tmp_path / f"a{fragment}b" / "home"
    home.mkdir(parents=True)
    return home


@pytest.mark.parametrize("client", sorted(EXPANDING))
@pytest.mark.parametrize("printed", [False, True], ids=["write", "print"])
def test_a_home_the_client_would_expand_is_refused(
    cli: CliRunner, dirs: tuple[Path, Path], tmp_path: Path, client: str, printed: bool
) -> None:
    fragment = EXPANDING[client]
    home = _home_with(tmp_path, fragment)
    extra = ("--print",) if printed else ()
    proc = _mcp_config(cli, dirs, home, f"--client={client}", *extra)
    line = _one_error(proc, str(home), "--home")
    assert repr(fragment[:2] if fragment.startswith("$") else fragment[:5]) in line
    assert proc.stdout == ""
    user, project = dirs
    assert list(user.rglob("*")) == [] and list(project.rglob("*")) == []  # nothing written


def test_a_lockfile_and_a_url_the_client_would_expand_are_refused(
    cli: CliRunner, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    lock = _home_with(tmp_path, "${X}") / "ontoskills.lock"
    proc = cli("--lockfile", str(lock), "mcp-config", "--dir", str(dirs[1]), "--client=claude")
    _one_error(proc, "--lockfile", str(lock), "'${'")
    url = "http://127.0.0.1:8765/mcp?home=${HOME}"
    proc = _mcp_config(cli, dirs, None, "--client=cursor", "--url", url, "--print")
    _one_error(proc, "--url", url)
    assert list(dirs[0].rglob("*")) == [] and list(dirs[1].rglob("*")) == []


@pytest.mark.parametrize("client", LITERAL)
def test_clients_that_read_values_as_written_get_the_path_as_it_is(
    cli: CliRunner, dirs: tuple[Path, Path], tmp_path: Path, client: str
) -> None:
    home = _home_with(tmp_path, "${HOME}$HOME{env:HOME}")
    proc = _mcp_config(cli, dirs, home, "--json", f"--client={client}")
    assert proc.returncode == 0, proc.stderr
    path = Path(json.loads(proc.stdout)["path"])
    text = path.read_text()
    doc = (
        tomllib.loads(text)
        if path.suffix == ".toml"
        else yaml.safe_load(text)
        if path.suffix == ".yaml"
        else json.loads(text)
    )
    servers = next(v for k, v in doc.items() if k != "$schema")
    entry = servers["ontoskills"]
    args = entry["args"]
    assert args[args.index("--home") + 1] == str(home)


def test_only_what_the_client_expands_is_refused(
    cli: CliRunner, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Claude Code expands `${VAR}` but not `$VAR`; Gemini CLI `$VAR` but not `$/`."""
    for client, fragment in (("claude", "$HOME"), ("gemini", "$/"), ("opencode", "${HOME}")):
        home = _home_with(tmp_path / client, fragment)
        proc = _mcp_config(cli, dirs, home, "--print", f"--client={client}")
        assert proc.returncode == 0, (client, proc.stderr)
        assert json.dumps(str(home)) in proc.stdout


# ------------------------------------------------------------- class 9: lock export URLs

SBOM_URLS = {
    # lock URL -> the externalReference it exports as (None: no reference, still exit 0)
    "git@github.com:org/repo.git": "ssh://git@github.com/org/repo.git",
    "git@git.example.org:/srv/git/reg.git": "ssh://git@git.example.org/srv/git/reg.git",
    "https://example.org/a|b^c`d": "https://example.org/a%7Cb%5Ec%60d",
    "https://example.org/reg/%zz": "https://example.org/reg/%25zz",
    "https://example.org/r.git#main#x": "https://example.org/r.git#main%23x",
    "https://example.org/a\\b": "https://example.org/a%5Cb",
    "https://example.org/q?x=[1]": "https://example.org/q?x=%5B1%5D",
    "https://example.org/a\u202eb": "https://example.org/a%E2%80%AEb",
    "https://[::1]:8765/reg": None,  # valid, but the bundled validator refuses IPv6 hosts
}


def _lock_with(home: Path, url: str, kind: str) -> Path:
    lock = lockfile.Lockfile()
    lock.registries["corp"] = lockfile.LockedRegistry("corp", kind, url, commit="a" * 40)
    f = LockedFile("a/ontoskill.ttl", "0" * 64, 3, False)
    lock.packages["acme/x"] = lockfile.LockedPackage(
        "acme/x", "1.0.0", "corp", "official", ["acme/x"], [f], {"a": True}, root="packages/x"
    )
    home.mkdir(parents=True, exist_ok=True)
    path = home / "ontoskills.lock"
    lockfile.write(lock, path)
    return path


@pytest.mark.parametrize("url", list(SBOM_URLS))
def test_every_lock_url_exports_as_a_valid_reference(
    cli: CliRunner, env: dict[str, str], url: str
) -> None:
    kind = "git" if "git" in url else "http"
    _lock_with(Path(env["ONTOSKILLS_HOME"]), url, kind)
    proc = cli("lock", "export")
    assert proc.returncode == 0, proc.stderr
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(proc.stdout) is None
    comp = json.loads(proc.stdout)["components"][0]
    expected = SBOM_URLS[url]
    refs = [r["url"] for r in comp.get("externalReferences", [])]
    assert refs == ([] if expected is None else [expected])
    qualifiers = PackageURL.from_string(comp["purl"]).qualifiers
    assert isinstance(qualifiers, dict)
    if expected is not None:
        assert qualifiers["repository_url"] == expected  # the purl names the same reference
    else:
        assert qualifiers["repository_url"] == url


def test_the_lock_keeps_the_url_the_user_added(cli: CliRunner, env: dict[str, str]) -> None:
    path = _lock_with(Path(env["ONTOSKILLS_HOME"]), "git@github.com:org/repo.git", "git")
    before = path.read_bytes()
    assert cli("lock", "export").returncode == 0
    assert path.read_bytes() == before and b"git@github.com:org/repo.git" in before


# ------------------------------------------------------------- class 10: ASCII digits only

HOSTILE_POLICY = [
    ("--threshold", "root=²"),
    ("--threshold", "root=١٦"),
    ("--threshold", "targets=𝟐"),
    ("--expires", "timestamp=٣d"),
    ("--expires", "snapshot=𝟕d"),
    ("--expires", "timestamp=1_0d"),
]


@pytest.mark.parametrize(("flag", "value"), HOSTILE_POLICY)
def test_signing_policy_numbers_are_ascii_digits(
    cli: CliRunner, tmp_path: Path, flag: str, value: str
) -> None:
    reg, keys = tmp_path / "reg", tmp_path / "keys"
    proc = cli(
        "registry", "init", str(reg), "--no-git", "--signed", "--keys", str(keys), flag, value
    )
    _one_error(proc, f"{flag} ", value.split("=")[0])
    assert not reg.exists() or list(reg.iterdir()) == []
    assert not keys.exists() or list(keys.iterdir()) == []


@pytest.mark.parametrize(
    "version", ["١.٠.١", "𝟏.𝟎.𝟐", "1.0." + "9" * 5000], ids=["arabic", "math-bold", "5000-digits"]
)
def test_a_version_in_another_scripts_digits_is_not_a_release_number(
    cli: CliRunner, tmp_path: Path, version: str
) -> None:
    registry = tmp_path / "registry"
    init_registry(registry, git=False)
    before = tree_state(registry)
    pkg = make_package(tmp_path, version=version, name="pkg")
    proc = cli("publish", str(pkg), "--registry", str(registry))
    line = _one_error(proc, "is not a release number")
    assert len(line) < 300  # a 5,000-digit version is quoted, not dumped
    assert tree_state(registry) == before


def test_a_registry_port_in_other_digits_is_a_usage_error(cli: CliRunner) -> None:
    proc = cli("--registry", "http://127.0.0.1:١٢/", "install", "acme/tools")
    _one_error(proc, "registry", "port")


@pytest.mark.parametrize("cursor", ["١", "𝟏", "²", " 1", "1_0", "+1", "-1"])
def test_an_mcp_cursor_is_ascii_digits_only(cursor: str) -> None:
    with pytest.raises(MCPError):
        offset_cursor(cursor)
    assert offset_cursor("10") == 10 and offset_cursor(None) == 0


_BANNED = ("isdigit", "isdecimal", "isnumeric")
# Python 3.12+ splits an f-string into FSTRING_* tokens; its text parts may hold a pattern too
_STRINGS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def test_no_unicode_digit_test_is_left_in_the_package() -> None:
    """`str.isdigit()` (and friends) and a regex `\\d` take every script's digits: numbers
    go through ontoskills/asciinum.py, regexes spell `[0-9]`. Comments may name them."""
    offenders = []
    for source in sorted((REPO / "ontoskills").rglob("*.py")):
        if source.name == "asciinum.py":
            continue
        text = source.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            bad = (tok.type == tokenize.NAME and tok.string in _BANNED) or (
                tok.type in _STRINGS and ("\\d" in tok.string or "\\D" in tok.string)
            )
            if bad:
                offenders.append(f"{source.relative_to(REPO)}:{tok.start[0]}: {tok.string[:40]}")
    assert not offenders, offenders


# ------------------------------------------------------------- emoji presentation sequences


def test_the_emoji_table_matches_known_members_and_non_members() -> None:
    members = "#*0123456789\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194\u21aa\u231a\u24c2"
    members += "\u2b50\u3030\u303d\u3299\U0001f004\U0001f1e6\U0001f600\U0001faf8"
    assert all(is_emoji(c) for c in members), [c for c in members if not is_emoji(c)]
    others = "a\u00aa\u2100\u2190\u2138\u213a\u2b51\u3031\U0001f000\U0001f650"
    assert not any(is_emoji(c) for c in others), [c for c in others if is_emoji(c)]


PRESENTATION = {
    "information": "\u2139\ufe0f",
    "copyright": "\u00a9\ufe0f",
    "trade-mark": "\u2122\ufe0f",
    "left-right-arrow": "\u2194\ufe0f",
    "double-exclamation": "\u203c\ufe0f",
    "information-as-text (VS15)": "\u2139\ufe0e",
}
NOT_PRESENTATION = {
    "after a letter": "a\ufe0f",
    "after an arrow that is not an emoji": "\u2190\ufe0f",
    "a digit without its keycap": "1\ufe0f",
    "a joiner between digits": "1\u200d2",
    "twice": "\u2139\ufe0f\ufe0f",
}


@pytest.mark.parametrize("text", PRESENTATION.values(), ids=PRESENTATION.keys())
def test_emoji_presentation_sequences_are_not_hidden_text(text: str) -> None:
    assert find_hidden_unicode(text) == []


@pytest.mark.parametrize("text", NOT_PRESENTATION.values(), ids=NOT_PRESENTATION.keys())
def test_a_selector_after_what_is_not_an_emoji_is_still_flagged(text: str) -> None:
    assert find_hidden_unicode(text)


def test_install_warns_on_a_letter_with_vs16_but_not_on_the_information_emoji(
    cli: CliRunner, tmp_path: Path
) -> None:
    ttl = f"{EVIL_ROOT}/tool/ontoskill.ttl"
    ok = build_hostile(tmp_path / "ok", mutate=write_raw(ttl, hidden_turtle("See \u2139\ufe0f")))
    proc = cli("--registry", str(ok), "install", EVIL, "--strict")
    assert proc.returncode == 0 and "invisible" not in proc.stderr, proc.stderr
    bad = build_hostile(tmp_path / "bad", mutate=write_raw(ttl, hidden_turtle("a\ufe0f b")))
    proc = cli("--home", str(tmp_path / "h2"), "--registry", str(bad), "install", EVIL)
    assert proc.returncode == 0 and "invisible/bidi characters (U+FE0F)" in proc.stderr


@pytest.mark.shared
def test_the_anthropics_packages_install_without_a_hidden_text_warning(
    cli: CliRunner, tmp_path: Path
) -> None:
    store = shared_path("ontostore-full", "index.json").parent
    packages = sorted(
        f"anthropics/{p.name}" for p in (store / "packages" / "anthropics").iterdir() if p.is_dir()
    )
    holders = [p for p in packages if "\u2139\ufe0f" in _package_text(store, p)]
    assert len(holders) >= 3, holders  # the three that warned on every install
    proc = cli("--registry", str(store), "install", *holders, "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "invisible/bidi" not in proc.stderr


def _package_text(store: Path, package: str) -> str:
    return "".join(
        f.read_text(encoding="utf-8", errors="replace")
        for f in (store / "packages" / package).rglob("*.ttl")
    )
