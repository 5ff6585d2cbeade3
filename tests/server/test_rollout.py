"""A new lock rolled out replica by replica behind a real HAProxy (the config docs/SERVER.md
gives), while a client keeps calling through the balancer: the procedure docs/SCALING.md
describes. Each replica serves a home through a symlink; lock B is `ci`'d into a new home
beside it, then the link is swapped in one rename; the replica's next refresh (a request's
or its list-change poll) loads the new home whole.

Lock A: acme/devtools + acme/design; lock B: acme/devtools + zeta/pdfkit. One query finds a
skill of each (`acme/design/colorize`, only in A; `zeta/pdfkit/pdf-forms`, only in B), so
every answer says which lock it came from: never both, never neither. Skips cleanly where
`haproxy` is not installed."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ontoskills.paths import LOCKFILE_NAME
from tests.conftest import CliRunner
from tests.helpers.httpserve import HttpServer
from tests.server.test_replicas import ALLOWED_HOST, HAPROXY, haproxy_in_front

pytestmark = pytest.mark.skipif(HAPROXY is None, reason="needs haproxy (apt-get install haproxy)")
A_ONLY = "acme/design/colorize"
B_ONLY = "zeta/pdfkit/pdf-forms"
QUERY = "add color to a pdf form"
SETTLE = 10  # answers seen before the roll-out starts and after it ends


def _lock_of(skills: set[str]) -> str:
    a, b = A_ONLY in skills, B_ONLY in skills
    return "A" if a and not b else "B" if b and not a else f"mixed or none: {sorted(skills)}"


async def _ask(client: Client) -> str:
    res = await client.call_tool("ontoskill", {"q": QUERY, "top_k": 50})
    if res.is_error or res.structured_content is None:
        raise AssertionError(f"tool error: {res.content}")
    return _lock_of({r["skill"] for r in res.structured_content["results"]})


class ClientLoop:
    """2026-07-28 calls through the balancer (round-robin: both replicas), one after another,
    until stopped: (when, which lock) per answer, and every failure."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answers: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def body() -> None:
            async with Client(streamable_http_client(self.url), mode="auto") as client:  # type: ignore[arg-type]
                while not self.stop.is_set():
                    try:
                        self.answers.append((time.monotonic(), await _ask(client)))
                    except Exception as exc:  # counted: the test asserts there are none
                        self.errors.append(repr(exc))

        try:
            anyio.run(body)
        except Exception as exc:
            self.errors.append(repr(exc))

    def wait_for(self, count: int, after: float = 0.0, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while sum(t > after for t, _ in self.answers) < count:
            assert time.monotonic() < deadline and self.thread.is_alive(), self.errors[-3:]
            time.sleep(0.05)


def _home_from_lock(cli: CliRunner, root: Path, lock: Path, config: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copyfile(config, root / "config.toml")
    shutil.copyfile(lock, root / LOCKFILE_NAME)
    cli("ci", check=True, extra_env={"ONTOSKILLS_HOME": str(root)})
    return root


def _swap(link: Path, target: Path) -> None:
    """Point `link` at `target` in one rename: a reader sees the old home or the new one."""
    staged = link.with_name(link.name + ".next")
    os.symlink(target, staged)
    os.replace(staged, link)


def _serves_b(url: str, timeout: float = 60) -> None:
    async def body() -> None:
        async with Client(streamable_http_client(url), mode="auto") as client:  # type: ignore[arg-type]
            with anyio.fail_after(timeout):
                while await _ask(client) != "B":
                    await anyio.sleep(0.1)

    anyio.run(body)


def test_lock_rolled_out_replica_by_replica_never_mixes_two_locks(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, tmp_path: Path
) -> None:
    config, lock_a = installed / "config.toml", installed / LOCKFILE_NAME
    scratch = _home_from_lock(cli, tmp_path / "scratch", lock_a, config)
    there = {"ONTOSKILLS_HOME": str(scratch)}
    cli("remove", "acme/design", check=True, extra_env=there)
    cli("--registry", "sample", "install", "zeta/pdfkit", check=True, extra_env=there)
    lock_b = scratch / LOCKFILE_NAME
    links = []
    for i in (1, 2):
        # Siblings of the registry: config.toml names it by a path relative to the home.
        home_a = _home_from_lock(cli, tmp_path / f"r{i}-a", lock_a, config)
        links.append(tmp_path / f"r{i}-current")
        _swap(links[-1], home_a)
    replicas = [
        HttpServer({**serve_env, "ONTOSKILLS_HOME": str(link)}, "--allow-host", ALLOWED_HOST)
        for link in links
    ]
    try:
        with haproxy_in_front(replicas, tmp_path) as url:
            loop = ClientLoop(url)
            loop.thread.start()
            loop.wait_for(SETTLE)
            started = time.monotonic()
            for link, replica in zip(links, replicas, strict=True):
                home_b = _home_from_lock(cli, link.with_name(link.name[:2] + "-b"), lock_b, config)
                _swap(link, home_b)
                _serves_b(replica.url)
            done = time.monotonic()
            loop.wait_for(SETTLE, after=done)
            loop.stop.set()
            loop.thread.join(60)
    finally:
        for r in replicas:
            r.__exit__()
    assert loop.errors == []
    kinds = [kind for _, kind in loop.answers]
    assert set(kinds) <= {"A", "B"}, [k for k in kinds if k not in ("A", "B")][:3]
    assert {k for t, k in loop.answers if t < started} == {"A"}
    assert {k for t, k in loop.answers if t > done} == {"B"}
    during = [k for t, k in loop.answers if started <= t <= done]
    print(
        f"\nroll-out {done - started:.1f} s; answers {len(kinds)} (during: {len(during)}, "
        f"A {during.count('A')}, B {during.count('B')}); errors {len(loop.errors)}"
    )
