"""Signing and the SBOM cost nothing where they are not used: `--version`, `search`, `list`
and `serve` (initialize and a tool call) never import tuf, securesystemslib or cyclonedx,
even in a home whose registry is signed and whose lock records it (each module a process
imports is listed by PYTHONPROFILEIMPORTTIME, which sees every import, nested or late)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ontoskills.server.app import TOOL_NAME
from tests.conftest import REPO
from tests.server.rawclient import RawServer
from tests.signing.conftest import Client

SIGNING = ("tuf", "securesystemslib", "cyclonedx")


def imported(stderr: str) -> set[str]:
    """Top-level packages a process imported, from its `-X importtime` lines."""
    return {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }


def _env(client: Client) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONTOSKILLS_")}
    env.update(
        ONTOSKILLS_HOME=str(client.home),
        ONTOSKILLS_CACHE_DIR=str(client.home.parent / "cache"),
        NO_COLOR="1",
        PYTHONPATH=str(REPO),
        PYTHONPROFILEIMPORTTIME="1",
    )
    return env


@pytest.mark.parametrize("kind", ["git"])  # the home is what matters, not the transport
def test_version_search_list_and_serve_import_no_signing_code(client: Client) -> None:
    lock = (client.home / "ontoskills.lock").read_text()
    assert "signed = true" in lock  # a signed registry, recorded: the case to keep cheap
    env = _env(client)
    for args in (["--version"], ["search", "lint"], ["list"], ["show", "acme/tools/lint"]):
        proc = subprocess.run(
            [sys.executable, "-m", "ontoskills", *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, (args, proc.stderr[-2000:])
        loaded = imported(proc.stderr)
        assert "ontoskills" in loaded  # the profile is on: an empty set would prove nothing
        assert loaded.isdisjoint(SIGNING), (args, sorted(loaded & set(SIGNING)))
    with RawServer(env, "serve") as raw:
        raw.initialize("2025-06-18")
        reply = raw.request("tools/call", {"name": TOOL_NAME, "arguments": {"q": "lint"}})
        assert "result" in reply, reply
        assert raw.close() == 0
    loaded = imported(raw.stderr.decode())
    assert "mcp" in loaded
    assert loaded.isdisjoint(SIGNING), sorted(loaded & set(SIGNING))


@pytest.mark.parametrize("kind", ["folder"])
def test_the_check_sees_a_signing_import(client: Client) -> None:
    """The same probe on a command that does verify (install from the signed registry)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", "install", "acme/tools"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=_env(client),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"tuf", "securesystemslib"} <= imported(proc.stderr)
