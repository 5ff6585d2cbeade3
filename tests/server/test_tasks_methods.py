"""The tasks extension's methods (SEP-2663) on a server that creates no tasks: -32021 naming
the extension to a client that did not declare it (before: -32601, which the conformance
suite's `sep-2663-tasks-methods-non-declaring` refuses), -32601 to one that did."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoskills.server.app import TASKS_EXTENSION, TASKS_METHODS
from tests.server.rawclient import RawServer


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_tasks_methods_from_a_client_that_did_not_declare_tasks(
    installed: Path, serve_env: dict[str, str], version: str
) -> None:
    with RawServer(serve_env, "serve") as raw:
        raw.initialize(version)
        for method in TASKS_METHODS:
            error = raw.request(method, {"taskId": "t-1"})["error"]
            assert error["code"] == -32021, (method, error)
            assert error["data"]["requiredCapabilities"]["extensions"] == {TASKS_EXTENSION: {}}
        # Serving goes on.
        assert raw.request("tools/list")["result"]["tools"][0]["name"] == "ontoskill"


def test_tasks_methods_from_a_declaring_client_are_not_found(
    installed: Path, serve_env: dict[str, str]
) -> None:
    with RawServer(serve_env, "serve") as raw:
        raw.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {TASKS_EXTENSION: {}}},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        error = raw.request("tasks/get", {"taskId": "t-1"})["error"]
        assert error["code"] == -32601, error
