"""Issue 13 class 7: files the user owns stay theirs.

The lockfile, config.toml and MCP client configs are the user's: a symlink to them (dotfiles,
a lock shared by checkouts) stays a link and its target is replaced atomically with its
permissions; mcp-config writes only standard JSON and refuses what it cannot write back;
two homes sharing one --lockfile never lose each other's entries (real concurrent CLIs).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills import jsonio, lockfile
from ontoskills.clientconfig import write as mcpconfig
from tests.conftest import REPO, CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ------------------------------------------------------------------------- lockfile
def test_a_symlinked_lockfile_stays_a_link_and_its_target_is_replaced(
    cli: CliRunner, reg: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    link = project / "ontoskills.lock"
    os.symlink("../dotfiles/ontoskills.lock", link)  # dangling until the first install
    cli("--registry", str(reg), "--lockfile", str(link), "install", "acme/devtools", check=True)
    assert link.is_symlink() and os.readlink(link) == "../dotfiles/ontoskills.lock"
    target = dotfiles / "ontoskills.lock"
    assert "acme/devtools" in lockfile.load(target).packages
    os.chmod(target, 0o600)
    inode = os.stat(target).st_ino
    cli("--registry", str(reg), "--lockfile", str(link), "install", "acme/design", check=True)
    assert link.is_symlink()
    assert sorted(lockfile.load(target).packages) == ["acme/design", "acme/devtools"]
    assert _mode(target) == 0o600  # the user's permissions, kept
    assert os.stat(target).st_ino != inode  # replaced (temp + rename), not rewritten in place
    assert [p.name for p in project.iterdir()] == ["ontoskills.lock"]  # no temp left
    assert sorted(p.name for p in dotfiles.iterdir()) == ["ontoskills.lock"]


def test_the_home_default_lockfile_may_be_a_symlink_too(
    cli: CliRunner, reg: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    cli("--registry", str(reg), "install", "acme/devtools", check=True)
    shared = tmp_path / "shared.lock"
    os.replace(home / "ontoskills.lock", shared)
    os.symlink(shared, home / "ontoskills.lock")
    cli("--registry", str(reg), "install", "acme/design", check=True)
    cli("remove", "acme/devtools", check=True)
    assert (home / "ontoskills.lock").is_symlink()
    assert sorted(lockfile.load(shared).packages) == ["acme/design"]
    assert cli("doctor").returncode == 0


def test_a_symlinked_config_toml_is_written_through(
    cli: CliRunner, reg: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    real = tmp_path / "dotfiles" / "ontoskills.toml"
    real.parent.mkdir()
    real.write_text("# my settings\n")
    os.chmod(real, 0o600)
    os.symlink(real, home / "config.toml")
    cli("registry", "add", "mine", str(reg), check=True)
    assert (home / "config.toml").is_symlink()
    assert "mine" in tomllib.loads(real.read_text())["registries"]
    assert _mode(real) == 0o600


# ----------------------------------------------------------------------- mcp-config
def _mcp(cli: CliRunner, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("mcp-config", "--client", "claude", "--dir", str(project), *args)


def test_a_symlinked_client_config_stays_a_link(cli: CliRunner, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    original = json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": [1, 2]}) + "\n"
    real.write_text(original)
    os.chmod(real, 0o600)
    os.symlink(real, project / ".mcp.json")
    proc = _mcp(cli, project)
    assert proc.returncode == 0, proc.stderr
    assert (project / ".mcp.json").is_symlink()
    doc = jsonio.loads(real.read_bytes(), source="mcp.json")
    assert set(doc["mcpServers"]) == {"other", "ontoskills"} and doc["keep"] == [1, 2]
    assert _mode(real) == 0o600
    backup = project / ".mcp.json.bak"
    assert not backup.is_symlink() and backup.read_text() == original
    assert _mode(backup) == 0o600


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E999"])
def test_a_config_with_a_number_json_cannot_hold_is_refused_untouched(
    cli: CliRunner, tmp_path: Path, number: str
) -> None:
    """Python reads 1e400 as inf; writing the merge back would produce `Infinity`."""
    project = tmp_path / "project"
    project.mkdir()
    raw = '{"mcpServers": {}, "limits": {"huge": NUMBER}}\n'.replace("NUMBER", number)
    (project / ".mcp.json").write_text(raw)
    proc = _mcp(cli, project)
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "$.limits.huge" in proc.stderr and "hint:" in proc.stderr
    assert (project / ".mcp.json").read_text() == raw
    assert not (project / ".mcp.json.bak").exists()


@pytest.mark.parametrize(
    "value",
    [
        '"\\ud800 lone surrogate"',
        "1.7976931348623157e308",
        "-0.0",
        "123456789012345678901234567890",
        '"tab\\tand \\u2028 separator"',
        "[[], {}, null, true, 1e-320]",
    ],
)
def test_what_mcp_config_writes_is_standard_json_holding_the_same_values(
    cli: CliRunner, tmp_path: Path, value: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    raw = '{"mcpServers": {}, "user": {"v": VALUE}}'.replace("VALUE", value)
    (project / ".mcp.json").write_text(raw)
    proc = _mcp(cli, project)
    assert proc.returncode == 0, proc.stderr
    written = (project / ".mcp.json").read_bytes()
    for bad in (b"Infinity", b"NaN"):
        assert bad not in written
    doc = jsonio.loads(written, source=".mcp.json")  # strict: no NaN, no duplicates, UTF-8
    assert doc["user"] == json.loads(raw)["user"]
    assert "ontoskills" in doc["mcpServers"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "huge"])
def test_a_client_config_that_is_not_a_regular_file_is_refused_without_blocking(
    cli: CliRunner, tmp_path: Path, kind: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = project / ".mcp.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "huge":  # sparse: 1 byte over the limit costs no disk, and is never read
        with open(path, "wb") as fh:
            fh.truncate(mcpconfig.MAX_CONFIG_BYTES + 1)
    else:
        path.mkdir()
    before = os.lstat(path)
    proc = cli("mcp-config", "--client", "claude", "--dir", str(project), timeout=60)
    assert proc.returncode == 4, proc.stderr
    why = "over the" if kind == "huge" else "not a regular file"
    assert why in proc.stderr and "not changing it" in proc.stderr, proc.stderr
    assert "hint:" in proc.stderr
    after = os.lstat(path)  # left as it was: same kind, same inode, same size
    assert (after.st_mode, after.st_ino, after.st_size) == (
        before.st_mode,
        before.st_ino,
        before.st_size,
    )
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]  # no .bak, no temp


def test_a_codex_toml_with_nan_and_inf_round_trips(cli: CliRunner, tmp_path: Path) -> None:
    """TOML can say inf and nan; what we write must read back as the same document."""
    project = tmp_path / "project"
    (project / ".codex").mkdir(parents=True)
    raw = (
        'model = "x"\nlimits = { a = inf, b = -inf, c = nan }\n\n'
        '[mcp_servers.other]\ncommand = "y"\n'
    )
    (project / ".codex/config.toml").write_text(raw)
    proc = cli("mcp-config", "--client", "codex", "--project", "--dir", str(project))
    assert proc.returncode == 0, proc.stderr
    doc = tomllib.loads((project / ".codex/config.toml").read_text())
    assert doc["limits"]["a"] == float("inf") and doc["limits"]["c"] != doc["limits"]["c"]
    assert set(doc["mcp_servers"]) == {"other", "ontoskills"}


# ---------------------------------------------------------- two homes, one lockfile
def _packages(n: int) -> list[PackageSpec]:
    return [
        PackageSpec(id=f"team/p{i}", skills=[SkillSpec(f"s{i}", f"skill {i}")]) for i in range(n)
    ]


@pytest.mark.slow
def test_two_homes_sharing_one_lockfile_lose_no_entry(tmp_path: Path) -> None:
    """Six real CLIs at once, three per home, all writing one --lockfile: every entry
    survives (each home holds only its own home lock; the lockfile lock serialises them)."""
    reg = build_registry(tmp_path / "reg", _packages(6))
    shared = tmp_path / "project" / "ontoskills.lock"
    shared.parent.mkdir()

    def start(home: str, *args: str) -> subprocess.Popen[str]:
        env = {
            **os.environ,
            "ONTOSKILLS_HOME": str(tmp_path / home),
            "ONTOSKILLS_CACHE_DIR": str(tmp_path / f"cache-{home}"),
            "ONTOSKILLS_LOCKFILE": str(shared),
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
        }
        return subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "--registry", str(reg), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    procs = [start("home-a" if i % 2 else "home-b", "install", f"team/p{i}") for i in range(6)]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert [code for code, _ in results] == [0] * 6, results
    assert sorted(lockfile.load(shared).packages) == [f"team/p{i}" for i in range(6)]
    for home, mine in (("home-a", (1, 3, 5)), ("home-b", (0, 2, 4))):
        on_disk = sorted(p.name for p in (tmp_path / home / "ontologies/author/team").iterdir())
        assert on_disk == [f"p{i}" for i in mine]
    # and the other way round: concurrent removes from both homes
    procs = [start("home-a", "remove", "team/p1"), start("home-b", "remove", "team/p0")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert sorted(lockfile.load(shared).packages) == [f"team/p{i}" for i in (2, 3, 4, 5)]
    assert [p.name for p in shared.parent.iterdir()] == ["ontoskills.lock"]  # nothing added
