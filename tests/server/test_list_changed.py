"""`listChanged`: a live install or removal with the real CLI, while a real SDK client holds a
session open over stdio or Streamable HTTP, reaches the client as
`notifications/resources/list_changed` (and prompts, with `--prompts`), after which
resources/list shows the change; nothing is sent when the lists did not change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ontoskills.server import early
from tests.conftest import CliRunner
from tests.helpers.httpserve import HttpServer, RawSession
from tests.server.conftest import serve_command

INTERVAL = 0.2  # [serve] watch_interval for these tests: short, so a change is seen at once
QUIET = 8 * INTERVAL  # long enough for several polls: what they would send, they would have
NEW = "skill://zeta/pdfkit/pdf-forms/SKILL.md"
RESOURCES = "notifications/resources/list_changed"
PROMPTS = "notifications/prompts/list_changed"


class Heard:
    """The notifications a client received, by method, and a way to wait for the next."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method in (RESOURCES, PROMPTS, "notifications/tools/list_changed"):
            self.methods.append(method)
            self._event.set()

    async def next(self) -> list[str]:
        """Wait for the next list_changed (a failed wait fails the test), then a poll more
        for a second one sent with it."""
        with anyio.fail_after(60):
            await self._event.wait()
        await anyio.sleep(2 * INTERVAL)
        self._event = anyio.Event()
        got, self.methods = self.methods, []
        return got


def _watch_fast(home: Path) -> None:
    config = home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + f"\n[serve]\nwatch_interval = {INTERVAL}\n",
        encoding="utf-8",
    )


async def _uris(client: Client) -> set[str]:
    uris: set[str] = set()
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor)
        uris |= {str(r.uri) for r in page.resources}
        cursor = page.next_cursor
        if not cursor:
            return uris


async def _install_and_remove(
    client: Client, heard: Heard, run: Callable[..., Awaitable[Any]], registry: Path
) -> None:
    assert client.protocol_version == "2025-11-25"
    caps = client.server_capabilities
    assert caps is not None and caps.resources is not None and caps.resources.list_changed
    assert caps.tools is not None and not caps.tools.list_changed  # one tool, never changes
    before = await _uris(client)
    assert NEW not in before
    await anyio.sleep(QUIET)
    assert heard.methods == []  # nothing changed: nothing said
    await run("--registry", str(registry), "install", "zeta/pdfkit")
    assert await heard.next() == [RESOURCES]
    assert await _uris(client) == before | {NEW}
    await run("disable", "zeta/pdfkit")
    assert await heard.next() == [RESOURCES]
    assert NEW not in await _uris(client)
    await run("enable", "zeta/pdfkit")
    assert await heard.next() == [RESOURCES]
    await run("remove", "zeta/pdfkit")
    assert await heard.next() == [RESOURCES]
    assert await _uris(client) == before
    await anyio.sleep(QUIET)
    assert heard.methods == []


def _runner(cli: CliRunner) -> Callable[..., Awaitable[Any]]:
    async def run(*args: str) -> Any:
        # The real CLI in its own process, off the event loop: the session keeps reading.
        return await anyio.to_thread.run_sync(lambda: cli(*args, check=True))

    return run


def _stdio(serve_env: dict[str, str], heard: Heard, *args: str) -> Client:
    command, argv = serve_command(*args)
    params = StdioServerParameters(command=command, args=argv, env=serve_env)
    return Client(params, mode="legacy", message_handler=heard)  # type: ignore[arg-type]


def _http(url: str, heard: Heard) -> Client:
    """A 2025-era SDK client over Streamable HTTP that records what the server announces."""
    transport = streamable_http_client(url, http_client=create_mcp_http_client())
    return Client(transport, mode="legacy", message_handler=heard)  # type: ignore[arg-type]


def test_stdio_session_hears_installs_and_removals(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    _watch_fast(installed)
    heard = Heard()

    async def main() -> None:
        async with _stdio(serve_env, heard) as client:
            await _install_and_remove(client, heard, _runner(cli), registry)

    anyio.run(main)


def test_http_session_hears_installs_and_removals(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    """A 2025-era Streamable HTTP session: the SDK client opens the standalone GET stream,
    which carries what the server says outside a request."""
    _watch_fast(installed)
    heard = Heard()

    async def main(url: str) -> None:
        client = _http(url, heard)
        async with client:
            await _install_and_remove(client, heard, _runner(cli), registry)

    with HttpServer(serve_env) as server:
        anyio.run(main, server.url)
        assert server.stop() == 0


def test_sessions_without_a_stream_hold_nobody_back(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    """Three 2025-era sessions that never open the GET stream (nowhere to send the news: the
    SDK drops it) beside one SDK client that does: it hears the install, and the silent
    sessions still answer and list the new skill."""
    _watch_fast(installed)
    heard = Heard()

    async def main(url: str) -> None:
        client = _http(url, heard)
        async with httpx.AsyncClient(timeout=60) as http, client:
            silent = [RawSession(http, url) for _ in range(3)]
            for session in silent:
                await session.open()
            await _runner(cli)("--registry", str(registry), "install", "zeta/pdfkit")
            assert await heard.next() == [RESOURCES]
            for session in silent:
                listed = await session.request("resources/list")
                assert NEW in {r["uri"] for r in listed["result"]["resources"]}

    with HttpServer(serve_env) as server:
        anyio.run(main, server.url)
        assert server.stop() == 0


def test_prompts_change_with_skills_under_prompts_flag(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    _watch_fast(installed)
    heard = Heard()

    async def main() -> None:
        async with _stdio(serve_env, heard, "--prompts") as client:
            names = {p.name for p in (await client.list_prompts()).prompts}
            assert "pdf-forms" not in names
            await _runner(cli)("--registry", str(registry), "install", "zeta/pdfkit")
            assert sorted(await heard.next()) == sorted([RESOURCES, PROMPTS])
            assert "pdf-forms" in {p.name for p in (await client.list_prompts()).prompts}

    anyio.run(main)


def test_watch_interval_zero_turns_the_poll_off(
    installed: Path, serve_env: dict[str, str], cli: CliRunner, registry: Path
) -> None:
    """Off: no notification, but the next request still serves the new skill."""
    config = installed / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "\n[serve]\nwatch_interval = 0\n", encoding="utf-8"
    )
    heard = Heard()

    async def main() -> None:
        async with _stdio(serve_env, heard) as client:
            await _runner(cli)("--registry", str(registry), "install", "zeta/pdfkit")
            await anyio.sleep(QUIET)
            assert heard.methods == []
            assert NEW in await _uris(client)

    anyio.run(main)


@pytest.mark.parametrize("value", ["-1", "1e9", '"2"', "true", "nan"])
def test_bad_watch_interval_is_a_config_error(installed: Path, cli: CliRunner, value: str) -> None:
    config = installed / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + f"\n[serve]\nwatch_interval = {value}\n",
        encoding="utf-8",
    )
    done = cli("list")
    assert done.returncode != 0
    assert "serve.watch_interval" in done.stderr and "hint:" in done.stderr


def test_early_answer_declares_what_changes() -> None:
    caps = early.INITIALIZE_CAPABILITIES
    assert caps["resources"]["listChanged"] and caps["prompts"]["listChanged"]
    assert not caps["tools"]["listChanged"]
