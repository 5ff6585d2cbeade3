"""init, add, sync, remove, install and ci in a project, with no flags (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

from ontoskills import lockfile
from tests.conftest import CliRunner


def _lock(root: Path) -> lockfile.Lockfile:
    return lockfile.load(root / "ontoskills.lock")


def test_init_add_search_with_no_flags(
    project: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    cli_inproc("init", check=True)
    manifest = project / "ontoskills.toml"
    assert manifest.is_file()
    assert (project / ".gitignore").read_text() == "/.ontoskills/\n"
    cli_inproc("add", "acme/devtools", check=True)
    assert '"acme/devtools" = {}' in manifest.read_text()
    assert "# The skills this project wants" in manifest.read_text()  # comments kept
    assert set(_lock(project).packages) == {"acme/devtools"}
    assert (project / ".ontoskills/ontologies/author/acme/devtools/package.json").is_file()
    # nothing went to the global home
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies").exists()
    out = cli_inproc("--json", "search", "debug failing tests", check=True)
    hits = json.loads(out.stdout)
    assert any("debugging" in json.dumps(h) for h in hits["results"])
