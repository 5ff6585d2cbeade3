"""sync converges the lock and tree on the manifest; --locked, --frozen and ci (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

from ontoskills import lockfile
from tests.conftest import CliRunner


def _write(root: Path, body: str) -> Path:
    path = root / "ontoskills.toml"
    path.write_text(body)
    return path


def _packages(root: Path) -> set[str]:
    return set(lockfile.load(root / "ontoskills.lock").packages)


def test_discovered_from_a_subfolder(project: Path, cli_inproc: CliRunner, monkeypatch) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    cli_inproc("sync", check=True)
    assert _packages(project) == {"acme/design"}
    listed = cli_inproc("list", check=True)
    assert "acme/design" in listed.stdout
    # -g ignores the project: the global home has nothing
    glob = cli_inproc("-g", "--json", "list", check=True)
    assert json.loads(glob.stdout)["packages"] == []


def test_sync_adds_removes_and_keeps(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n"acme/devtools" = {}\n')
    cli_inproc("sync", check=True)
    design = project / ".ontoskills/ontologies/author/acme/design"
    before = (design / "package.json").stat().st_ino
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    out = cli_inproc("--json", "sync", check=True)
    changes = {c["package_id"]: c["action"] for c in json.loads(out.stdout)["changes"]}
    assert changes == {"acme/devtools": "removed", "acme/design": "unchanged"}
    assert _packages(project) == {"acme/design"}
    assert (design / "package.json").stat().st_ino == before  # untouched, not re-placed
    assert not (project / ".ontoskills/ontologies/author/acme/devtools").exists()


def test_skills_subset_is_requested_as_written(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/devtools" = { skills = ["reviewing"] }\n')
    cli_inproc("sync", check=True)
    pkg = lockfile.load(project / "ontoskills.lock").packages["acme/devtools"]
    assert pkg.requested == ["acme/devtools/reviewing"]
    assert set(pkg.skills) == {"reviewing"}


def test_locked_names_the_difference(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    cli_inproc("sync", check=True)
    lock_before = (project / "ontoskills.lock").read_bytes()
    _write(project, '[dependencies]\n"acme/devtools" = {}\n')
    for args in (("sync", "--locked"), ("ci",)):
        proc = cli_inproc(*args)
        assert proc.returncode == 3, proc.stderr
        assert "adds acme/devtools" in proc.stderr and "removes acme/design" in proc.stderr
    assert (project / "ontoskills.lock").read_bytes() == lock_before
    # --frozen installs the lock as written, without reading the dependencies
    cli_inproc("sync", "--frozen", check=True)
    assert _packages(project) == {"acme/design"}


def test_ci_in_a_project_restores_a_clean_tree(project: Path, cli_inproc: CliRunner) -> None:
    _write(project, '[dependencies]\n"acme/design" = {}\n')
    cli_inproc("sync", check=True)
    lock = (project / "ontoskills.lock").read_bytes()
    tree = project / ".ontoskills"
    import shutil

    shutil.rmtree(tree)
    cli_inproc("ci", check=True)
    assert (tree / "ontologies/author/acme/design/package.json").is_file()
    assert (project / "ontoskills.lock").read_bytes() == lock


def test_install_in_a_project_saves_to_the_manifest(project: Path, cli_inproc: CliRunner) -> None:
    manifest = _write(project, "# my skills\n[dependencies]\n")
    cli_inproc("install", "acme/devtools/reviewing", check=True)
    text = manifest.read_text()
    assert text.startswith("# my skills\n")
    assert '"acme/devtools" = {skills = ["reviewing"]}' in text
    cli_inproc("remove", "acme/devtools", check=True)
    assert "acme/devtools" not in manifest.read_text()
    assert _packages(project) == set()


def test_a_failed_add_leaves_the_manifest_as_it_was(project: Path, cli_inproc: CliRunner) -> None:
    manifest = _write(project, "[dependencies]\n# keep me\n")
    proc = cli_inproc("add", "acme/nope")
    assert proc.returncode == 7, proc.stderr  # not found
    assert manifest.read_text() == "[dependencies]\n# keep me\n"
    assert not (project / "ontoskills.lock").exists()


def test_project_registry_relative_to_the_manifest(
    project: Path, registry: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    # no config.toml at all: the manifest declares the registry by a relative path
    (Path(env["ONTOSKILLS_HOME"]) / "config.toml").unlink()
    rel = Path("..") / registry.name
    _write(
        project,
        f'[dependencies]\n"acme/design" = {{ registry = "corp" }}\n'
        f'[registries.corp]\nurl = "{rel}"\n',
    )
    cli_inproc("sync", check=True)
    locked = lockfile.load(project / "ontoskills.lock")
    assert locked.packages["acme/design"].registry == "corp"
    # the lock stores the path relative to itself: a copied checkout still resolves
    assert f'url = "{rel}"' in (project / "ontoskills.lock").read_text()


def test_two_projects_share_one_cache(
    tmp_path: Path, project: Path, cli_inproc: CliRunner, env: dict[str, str]
) -> None:
    other = tmp_path / "proj2"
    other.mkdir()
    for root in (project, other):
        _write(root, '[dependencies]\n"acme/devtools" = {}\n')
        cli_inproc("--project", str(root), "sync", check=True)
    blobs = list((Path(env["ONTOSKILLS_CACHE_DIR"]) / "blobs").rglob("*"))
    one = lockfile.load(project / "ontoskills.lock").packages["acme/devtools"]
    assert len([b for b in blobs if b.is_file()]) <= len(one.files)  # stored once
    assert _packages(other) == {"acme/devtools"}
