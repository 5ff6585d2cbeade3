"""`server.json` (the official MCP Registry's entry for us) and the README's `mcp-name` line.

Two layers. Always: `check_server_json`, a small checker of the constraints the official
2025-09-29 schema makes (https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json,
modelcontextprotocol/registry docs/reference/server-json/server.schema.json; third-party files
are not committed, so it is restated here, not vendored), tested on our file and on broken
copies of it, plus the facts the registry checks on publish that the schema does not (the name
on PyPI, one version, the README line). And the full JSON-Schema validation when
ONTOSKILLS_SERVER_SCHEMA names a copy of the real file (no npm package ships it: docs/SERVER.md).
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ontoskills import __version__, tomlio
from ontoskills.errors import OntoskillsError
from ontoskills.server.http import PATH
from tests.conftest import REPO

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
SHA256 = re.compile(r"^[a-f0-9]{64}$")
PACKAGE_KEYS = {
    "registryType",
    "registryBaseUrl",
    "identifier",
    "version",
    "fileSha256",
    "runtimeHint",
    "transport",
    "runtimeArguments",
    "packageArguments",
    "environmentVariables",
}
INPUT_FORMATS = {"string", "number", "boolean", "filepath"}
# What the schema's description of `version` says the registry rejects.
RANGE = re.compile(r"^[\^~<>=]|\.x$|\*|\.x\.|\|\|| - ")


def _string(value: Any, where: str, lo: int = 0, hi: int | None = None) -> list[str]:
    if not isinstance(value, str):
        return [f"{where}: not a string"]
    if len(value) < lo or (hi is not None and len(value) > hi):
        return [f"{where}: length {len(value)} outside {lo}..{hi}"]
    return []


def _input(item: Any, where: str) -> list[str]:
    """Input / InputWithVariables: typed optional fields, `variables` of Inputs."""
    if not isinstance(item, dict):
        return [f"{where}: not an object"]
    problems = []
    for key in ("description", "value", "default", "placeholder"):
        if key in item:
            problems += _string(item[key], f"{where}.{key}")
    for key in ("isRequired", "isSecret", "isRepeated"):
        if key in item and not isinstance(item[key], bool):
            problems.append(f"{where}.{key}: not a boolean")
    if "format" in item and item["format"] not in INPUT_FORMATS:
        problems.append(f"{where}.format: {item['format']!r} not one of {sorted(INPUT_FORMATS)}")
    if "choices" in item and not (
        isinstance(item["choices"], list) and all(isinstance(c, str) for c in item["choices"])
    ):
        problems.append(f"{where}.choices: not a list of strings")
    variables = item.get("variables", {})
    if not isinstance(variables, dict):
        problems.append(f"{where}.variables: not an object")
    else:
        for name, var in variables.items():
            problems += _input(var, f"{where}.variables.{name}")
    return problems


def _key_value(item: Any, where: str) -> list[str]:
    """KeyValueInput (environment variables, headers): an input with a `name`."""
    problems = _input(item, where)
    if isinstance(item, dict):
        problems += _string(item.get("name"), f"{where}.name")
    return problems


def _argument(item: Any, where: str) -> list[str]:
    """Argument: positional (needs `value` or `valueHint`) or named (needs `name`)."""
    problems = _input(item, where)
    if not isinstance(item, dict):
        return problems
    kind = item.get("type")
    if kind == "positional":
        if "value" not in item and "valueHint" not in item:
            problems.append(f"{where}: a positional argument needs value or valueHint")
    elif kind == "named":
        problems += _string(item.get("name"), f"{where}.name")
    else:
        problems.append(f"{where}.type: {kind!r} is neither positional nor named")
    return problems


def _transport(item: Any, where: str, *, remote: bool = False) -> list[str]:
    kinds = ("streamable-http", "sse") if remote else ("stdio", "streamable-http", "sse")
    if not isinstance(item, dict) or item.get("type") not in kinds:
        return [f"{where}: type must be one of {kinds}"]
    problems = []
    if item["type"] != "stdio":
        problems += _string(item.get("url"), f"{where}.url", 1)
        headers = item.get("headers", [])
        if not isinstance(headers, list):
            problems.append(f"{where}.headers: not a list")
        else:
            for i, header in enumerate(headers):
                problems += _key_value(header, f"{where}.headers[{i}]")
    return problems


def _package(item: Any, where: str) -> list[str]:
    if not isinstance(item, dict):
        return [f"{where}: not an object"]
    problems = [f"{where}.{k}: not allowed" for k in sorted(set(item) - PACKAGE_KEYS)]
    for key in ("registryType", "identifier", "version", "transport"):
        if key not in item:
            problems.append(f"{where}.{key}: required")
    version = item.get("version")
    problems += _string(version, f"{where}.version", 1)
    if version == "latest" or (isinstance(version, str) and RANGE.search(version)):
        problems.append(f"{where}.version: {version!r} is not one specific version")
    if "fileSha256" in item and not (
        isinstance(item["fileSha256"], str) and SHA256.match(item["fileSha256"])
    ):
        problems.append(f"{where}.fileSha256: not 64 lowercase hex digits")
    if "transport" in item:
        problems += _transport(item["transport"], f"{where}.transport")
    for key in ("runtimeArguments", "packageArguments", "environmentVariables"):
        values = item.get(key, [])
        if not isinstance(values, list):
            problems.append(f"{where}.{key}: not a list")
            continue
        check = _key_value if key == "environmentVariables" else _argument
        for i, value in enumerate(values):
            problems += check(value, f"{where}.{key}[{i}]")
    return problems


def check_server_json(server: Any) -> list[str]:
    """What the 2025-09-29 server.schema.json would refuse in `server` (empty: nothing)."""
    if not isinstance(server, dict):
        return ["server.json: not an object"]
    problems = []
    for key in ("name", "description", "version"):
        if key not in server:
            problems.append(f"{key}: required")
    name = server.get("name")
    problems += _string(name, "name", 3, 200)
    if isinstance(name, str) and not NAME.match(name):
        problems.append(f"name: {name!r} does not match {NAME.pattern}")
    problems += _string(server.get("description"), "description", 1, 100)
    problems += _string(server.get("version"), "version", 0, 255)
    repository = server.get("repository", {"url": "", "source": ""})
    if not isinstance(repository, dict) or not {"url", "source"} <= set(repository):
        problems.append("repository: needs url and source")
    for key, check in (("packages", _package), ("remotes", None)):
        items = server.get(key, [])
        if not isinstance(items, list):
            problems.append(f"{key}: not a list")
            continue
        for i, item in enumerate(items):
            where = f"{key}[{i}]"
            problems += check(item, where) if check else _transport(item, where, remote=True)
    return problems


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


def test_server_json_keeps_the_schemas_constraints() -> None:
    assert check_server_json(_server()) == []


def _broken(change: Any) -> list[str]:
    server = copy.deepcopy(_server())
    change(server)
    return check_server_json(server)


BROKEN: dict[str, Any] = {
    "no name": lambda s: s.pop("name"),
    "two slashes": lambda s: s.update(name="io.github.x/a/b"),
    "name too long": lambda s: s.update(name="a/" + "b" * 199),
    "long description": lambda s: s.update(description="x" * 101),
    "empty description": lambda s: s.update(description=""),
    "no version": lambda s: s.pop("version"),
    "version too long": lambda s: s.update(version="1" * 256),
    "unknown package key": lambda s: s["packages"][0].update(command="uvx"),
    "latest": lambda s: s["packages"][0].update(version="latest"),
    "a range": lambda s: s["packages"][0].update(version="^0.1.0"),
    "no transport": lambda s: s["packages"][0].pop("transport"),
    "odd transport": lambda s: s["packages"][0].update(transport={"type": "websocket"}),
    "http without url": lambda s: s["packages"][0].update(transport={"type": "streamable-http"}),
    "bad sha": lambda s: s["packages"][0].update(fileSha256="ABC"),
    "positional without value": lambda s: s["packages"][0]["packageArguments"][0].pop("value"),
    "named without name": lambda s: s["packages"][0]["packageArguments"].append(
        {"type": "named", "value": "x"}
    ),
    "env without name": lambda s: s["packages"][0]["environmentVariables"][0].pop("name"),
    "bad env format": lambda s: s["packages"][0]["environmentVariables"][0].update(format="dir"),
    "header without name": lambda s: s["remotes"][0]["headers"][0].pop("name"),
    "stdio remote": lambda s: s["remotes"].append({"type": "stdio"}),
    "remote without url": lambda s: s["remotes"][0].pop("url"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_checker_refuses_what_the_schema_refuses(case: str) -> None:
    assert _broken(BROKEN[case]) != []


def test_our_facts_match_the_project() -> None:
    """The PyPI identifier is the project's name, the versions are pyproject's, the README's
    `mcp-name:` line is the entry's name."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    project = tomlio.loads(text, source="pyproject.toml", error=OntoskillsError, max_bytes=1 << 20)[
        "project"
    ]
    server = _server()
    (pypi,) = [p for p in server["packages"] if p["registryType"] == "pypi"]
    assert pypi["identifier"] == project["name"]
    assert server["version"] == pypi["version"] == project["version"]
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    named = [line.split(":", 1)[1].strip() for line in readme if line.startswith("mcp-name:")]
    assert named == [server["name"]]


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
