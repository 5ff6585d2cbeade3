"""Error contract: every failure is `error:` + `hint:` on stderr with the documented exit code,
never a traceback, and under --json also one JSON error document on stdout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills.install import homelock
from ontoskills.paths import Home
from tests.conftest import REPO, CliRunner
from tests.helpers.registry import build_registry, sample_packages


def assert_error(proc: subprocess.CompletedProcess[str], code: int, *, json_doc: bool) -> dict:
    """The process failed with `code`, with exactly an error line and a hint line."""
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-2].startswith("error: "), proc.stderr
    assert lines[-1].startswith("hint: "), proc.stderr
    if not json_doc:
        assert proc.stdout == ""
        return {}
    doc = json.loads(proc.stdout)  # exactly one document, nothing else on stdout
    assert doc["schema_version"] == 1
    assert doc["error"]["exit_code"] == code
    assert doc["error"]["message"] == lines[-2].removeprefix("error: ")
    assert doc["error"]["hint"] == lines[-1].removeprefix("hint: ")
    return doc


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (("nosuch",), 2, "no such command"),
        (("install", "--bogus"), 2, "--bogus"),
        (("install", "--min-trust", "gold", "a/b"), 2, "--min-trust"),
        (("remove",), 2, "missing argument"),
        (("install", "Foo/../x"), 2, "invalid package spec"),
        (("ci",), 3, "no lockfile"),
        (("info", "a/b"), 7, "not installed"),
        (("registry", "remove", "nope"), 7, "no registry named"),
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_errors_are_one_line_plus_hint(
    cli: CliRunner, args: tuple[str, ...], code: int, needle: str, as_json: bool
) -> None:
    proc = cli(*(("--json",) if as_json else ()), *args)
    doc = assert_error(proc, code, json_doc=as_json)
    assert needle in proc.stderr
    if as_json:
        assert needle in doc["error"]["message"]


def test_json_flag_after_the_verb_also_gives_a_json_usage_error(cli: CliRunner) -> None:
    doc = assert_error(cli("install", "--bogus", "--json"), 2, json_doc=True)
    assert "ontoskills install --help" in doc["error"]["hint"]


def test_malformed_config_is_a_usage_error(cli: CliRunner, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir()
    (home / "config.toml").write_text("registries = [\n")
    for args in (("list",), ("registry", "list", "--json"), ("install", "a/b")):
        proc = cli(*args)
        assert_error(proc, 2, json_doc="--json" in args)
        assert "config.toml" in proc.stderr


def test_malformed_lock_is_exit_3(cli: CliRunner, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir()
    (home / "ontoskills.lock").write_text("<<<<<<< HEAD\nlock_version = 1\n")
    for args in (("list",), ("outdated", "--json"), ("install",), ("ci",), ("remove", "a/b")):
        proc = cli(*args)
        assert_error(proc, 3, json_doc="--json" in args)
        assert "merge-conflict" in proc.stderr
    doctor = cli("doctor", "--json")  # a report, not an error: exit 3 and the reason inside
    assert doctor.returncode == 3
    assert "merge-conflict" in json.loads(doctor.stdout)["lock_error"]


def test_home_that_is_a_file_is_a_clear_error_not_a_traceback(
    cli: CliRunner, tmp_path: Path
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    proc = cli("--home", str(not_a_dir), "--json", "registry", "add", "x", str(tmp_path))
    assert_error(proc, 1, json_doc=True)
    assert str(not_a_dir) in proc.stderr
    proc = cli("--home", str(not_a_dir), "install", "a/b")
    assert_error(proc, 1, json_doc=False)
    assert "Not a directory" in proc.stderr


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions"
)
def test_unreadable_home_is_a_clear_error(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "locked"
    home.mkdir()
    home.chmod(0)
    try:
        proc = cli("--home", str(home / "inner"), "registry", "add", "x", str(tmp_path))
    finally:
        home.chmod(0o755)
    assert_error(proc, 1, json_doc=False)
    assert "Permission denied" in proc.stderr


def test_keyboard_interrupt_exits_130(env: dict[str, str], tmp_path: Path) -> None:
    """Ctrl-C while waiting for another process's home lock: exit 130, no traceback."""
    registry = build_registry(tmp_path / "reg", sample_packages())
    home = Home.resolve(env["ONTOSKILLS_HOME"])
    with homelock.hold(home, "test holder"):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ontoskills",
                "--registry",
                str(registry),
                "install",
                "acme/devtools",
            ],
            env={**os.environ, **env, "PYTHONPATH": str(REPO)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the child says it waits before it blocks
        assert "waiting for another ontoskills process" in line
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert out == ""
    assert not (home.root / "ontologies/author/acme/devtools").exists()


def test_cache_clean_refuses_a_file(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    proc = cli("cache", "clean", extra_env={"ONTOSKILLS_CACHE_DIR": str(target)})
    assert_error(proc, 2, json_doc=False)
    assert target.read_text() == "keep me"
