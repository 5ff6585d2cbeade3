"""`server.json` (the official MCP Registry's entry for us) and the README's `mcp-name` line.

Validated against the registry's published schema when it is at hand: ONTOSKILLS_SERVER_SCHEMA
names a copy of https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json
(modelcontextprotocol/registry, docs/reference/server-json/server.schema.json); the checks
the registry makes on publish that the schema does not (the name on PyPI, one version) always
run.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ontoskills import __version__
from ontoskills.server.http import PATH
from tests.conftest import REPO

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


def _server() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "server.json").read_text(encoding="utf-8"))
    return data


def test_server_json_matches_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    where = os.environ.get("ONTOSKILLS_SERVER_SCHEMA")
    if not where or not Path(where).is_file():
        pytest.skip("ONTOSKILLS_SERVER_SCHEMA names no copy of the registry's schema")
    schema = json.loads(Path(where).read_text(encoding="utf-8"))
    assert schema["$id"] == SCHEMA_URL
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(
        _server()
    )


def test_what_the_registry_checks_on_publish() -> None:
    server = _server()
    assert server["$schema"] == SCHEMA_URL
    name = server["name"]
    assert re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/ontoskills", name)
    assert 1 <= len(server["description"]) <= 100  # the schema's maxLength
    # One version everywhere: the registry entry, the PyPI package, what `initialize` says.
    (pypi,) = [p for p in server["packages"] if p["registryType"] == "pypi"]
    assert server["version"] == pypi["version"] == __version__
    assert pypi["identifier"] == "ontoskills" and pypi["transport"] == {"type": "stdio"}
    assert [a.get("value") for a in pypi["packageArguments"]] == ["serve"]
    (remote,) = server["remotes"]
    assert remote["type"] == "streamable-http" and remote["url"].endswith(PATH)
    # The registry proves PyPI ownership by this line in the package's README.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {name}" in readme.splitlines()
