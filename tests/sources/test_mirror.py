"""`ontoskills mirror`: air-gapped static registries (issue 27 item 2).

Synthetic registries (tests/helpers/registry.py), signed ones (tests/signing helpers), a
loopback HTTP server for the HTTP case; every install from a mirror runs with the origin
moved away, so nothing can come from it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.registry import build_registry, sample_packages
from tests.helpers.tinymodel import build_tiny_model

MARKER = ".ontoskills-output"


def tree(home: Path) -> dict[str, tuple[bytes, bool]]:
    """Every installed package file: bytes and executable bit."""
    root = home / "ontologies" / "author"
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MARKER
    }


def run_json(cli: CliRunner, *args: str) -> dict[str, object]:
    proc = cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout)
    return out


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "origin", sample_packages())


def test_mirror_holds_only_named_packages_and_installs_offline(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    mirror = tmp_path / "mirror"
    done = run_json(cli, "--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror))
    assert [p["id"] for p in done["packages"]] == ["acme/devtools"]  # type: ignore[index,union-attr]
    index = json.loads((mirror / "index.json").read_bytes())
    assert [e["package_id"] for e in index["packages"]] == ["acme/devtools"]
    assert not (mirror / "packages" / "acme" / "design").exists()
    # unlisted assets (folder listing) and their exec bit came along
    run_sh = mirror / "packages/acme/devtools/debugging/scripts/run.sh"
    assert run_sh.read_bytes() == b"#!/bin/sh\necho run\n" and os.access(run_sh, os.X_OK)
    # intent vectors only with --with-embeddings
    assert not list(mirror.rglob("intents.json"))

    # the same install from the origin and from the mirror give the same tree
    cli("--registry", str(origin), "install", "acme/devtools", check=True)
    from_origin = tree(Path(env["ONTOSKILLS_HOME"]))
    moved = origin.rename(tmp_path / "gone")  # the origin is out of reach
    home2 = tmp_path / "home2"
    cli(
        "--home",
        str(home2),
        "--offline",
        "--registry",
        str(mirror),
        "install",
        "acme/devtools",
        check=True,
    )
    assert tree(home2) == from_origin
    # vectors were not mirrored: asking for them says so (exit 4), nothing installed
    home3 = ["--home", str(tmp_path / "home3"), "--registry", str(mirror)]
    proc = cli(*home3, "install", "acme/devtools", "--with-embeddings")
    assert proc.returncode == 4 and "mirror it again" in proc.stderr
    assert (
        cli("--home", str(home2), "--registry", str(mirror), "install", "acme/design").returncode
        == 7
    )
    assert moved.is_dir()


def test_rerun_is_incremental_and_removes_only_its_own_stale_files(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path
) -> None:
    cli = cli_inproc
    mirror = tmp_path / "mirror"
    args = ("--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror))
    first = run_json(cli, *args)
    assert first["copied"] and first["skipped"] == 0
    before = {p: (mirror / p).stat().st_mtime_ns for p in files(mirror)}
    again = run_json(cli, *args)
    assert again["copied"] == 0 and again["skipped"] == first["copied"]
    assert {p: (mirror / p).stat().st_mtime_ns for p in files(mirror)} == before  # not rewritten

    pkg = origin / "packages/acme/devtools"
    (pkg / "LICENSE").write_bytes(b"Apache-2.0\n")
    (pkg / "debugging/notes.md").unlink()
    third = run_json(cli, *args)
    assert third["copied"] == 1 and third["removed"] == 1
    assert (mirror / "packages/acme/devtools/LICENSE").read_bytes() == b"Apache-2.0\n"
    assert not (mirror / "packages/acme/devtools/debugging/notes.md").exists()

    # adding another package keeps the first (a mirror grows)
    run_json(cli, "--registry", str(origin), "mirror", "acme/design", "--to", str(mirror))
    ids = [e["package_id"] for e in json.loads((mirror / "index.json").read_bytes())["packages"]]
    assert ids == ["acme/design", "acme/devtools"]


def test_refuses_a_folder_it_did_not_write(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path
) -> None:
    cli = cli_inproc
    target = tmp_path / "project"
    target.mkdir()
    (target / "notes.txt").write_bytes(b"mine")
    proc = cli("--registry", str(origin), "mirror", "acme/devtools", "--to", str(target))
    assert proc.returncode == 2 and "did not write" in proc.stderr
    assert files(target) == {"notes.txt": b"mine"}

    # a file the user drops into a mirror later makes it theirs: refused, nothing deleted
    mirror = tmp_path / "mirror"
    cli("--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror), check=True)
    (mirror / "README").write_bytes(b"ours now")
    proc = cli("--registry", str(origin), "mirror", "acme/design", "--to", str(mirror))
    assert proc.returncode == 2 and "README" in proc.stderr
    assert (mirror / "README").read_bytes() == b"ours now"

    # the source registry, or a folder inside it, is never a mirror target
    for bad in (origin, origin / "packages"):
        proc = cli("--registry", str(origin), "mirror", "acme/devtools", "--to", str(bad))
        assert proc.returncode == 2, proc.stderr


def test_from_lock_then_ci_against_the_mirror_is_byte_identical(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    home = Path(env["ONTOSKILLS_HOME"])
    cli("--registry", str(origin), "install", "acme/devtools", "acme/design", check=True)
    lock = home / "ontoskills.lock"
    team = tmp_path / "team" / "ontoskills.lock"  # a lock's local paths are relative to it
    team.parent.mkdir()
    shutil.copyfile(lock, team)
    mirror = tmp_path / "mirror"
    cli("mirror", "--from-lock", str(team), "--to", str(mirror), check=True)
    origin.rename(tmp_path / "gone")

    for served in ("folder", "http"):
        home2 = tmp_path / f"home-{served}"
        home2.mkdir()
        shutil.copyfile(team, home2 / "ontoskills.lock")
        if served == "folder":
            cli("--home", str(home2), "--offline", "--registry", str(mirror), "ci", check=True)
        else:
            with FaultServer(mirror) as srv:
                cli("--home", str(home2), "--registry", srv.url, "ci", check=True)
        assert tree(home2) == tree(home)
        assert (home2 / "ontoskills.lock").read_bytes() == lock.read_bytes()


def test_from_lock_refuses_a_registry_that_changed(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    cli("--registry", str(origin), "install", "acme/devtools", check=True)
    (origin / "packages/acme/devtools/LICENSE").write_bytes(b"changed\n")
    lock = Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock"
    mirror = tmp_path / "mirror"
    proc = cli("mirror", "--from-lock", str(lock), "--to", str(mirror))
    assert proc.returncode == 4 and "LICENSE" in proc.stderr
    assert not (mirror / "packages/acme/devtools/LICENSE").exists()


def test_http_mirror_installs(cli_inproc: CliRunner, origin: Path, tmp_path: Path) -> None:
    cli = cli_inproc
    mirror = tmp_path / "mirror"
    cli("--registry", str(origin), "mirror", "acme/design", "--to", str(mirror), check=True)
    origin.rename(tmp_path / "gone")
    with FaultServer(mirror) as srv:
        cli("--registry", srv.url, "install", "acme/design", check=True)
        assert srv.requests  # it really came over HTTP


def test_with_embeddings_carries_vectors_and_the_encoder(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path
) -> None:
    cli = cli_inproc
    model = build_tiny_model(tmp_path / "model")
    mirror = tmp_path / "mirror"
    done = run_json(
        cli,
        "--registry",
        str(origin),
        "mirror",
        "acme/design",
        "--to",
        str(mirror),
        "--with-embeddings",
        "--model",
        str(model),
    )
    assert done["model"] is True
    assert list(mirror.rglob("intents.json"))
    for name in ("model.onnx", "tokenizer.json"):
        assert (mirror / "model" / name).read_bytes() == (model / name).read_bytes()
    # without --model and no encoder anywhere: vectors come, a note says the model did not
    bare = run_json(
        cli,
        "--registry",
        str(origin),
        "mirror",
        "acme/design",
        "--to",
        str(tmp_path / "m2"),
        "--with-embeddings",
    )
    assert bare["model"] is False and any("--model" in n for n in bare["notes"])  # type: ignore[union-attr]


# ------------------------------------------------------------------ signed registries
@pytest.fixture
def signed_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tests.publish.conftest import GIT_ENV
    from tests.signing.conftest import make_signed

    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    reg = make_signed(tmp_path / "maintainer")
    reg.publish("acme/tools")
    reg.publish("acme/other")
    return reg.root


@pytest.mark.parametrize("served", ["folder", "http"])
def test_partial_mirror_of_a_signed_registry_verifies_against_its_root(
    cli_inproc: CliRunner, signed_origin: Path, tmp_path: Path, served: str
) -> None:
    cli = cli_inproc
    root_file = tmp_path / "trusted-root.json"
    shutil.copyfile(signed_origin / "metadata" / "root.json", root_file)
    mirror = tmp_path / "mirror"
    done = run_json(
        cli, "--registry", str(signed_origin), "mirror", "acme/tools", "--to", str(mirror)
    )
    assert done["signed"] is True and any("signed index.json" in n for n in done["notes"])  # type: ignore[union-attr]
    # the signed bytes and every metadata file the client reads, verbatim
    assert (mirror / "index.json").read_bytes() == (signed_origin / "index.json").read_bytes()
    for meta in (signed_origin / "metadata").iterdir():
        assert (mirror / "metadata" / meta.name).read_bytes() == meta.read_bytes()
    assert not (mirror / "packages/acme/other").exists()
    shutil.move(signed_origin, tmp_path / "gone")

    def client(home: Path, url: str) -> list[str]:
        kind = ["--kind", "folder"] if served == "folder" else []
        base = ["--home", str(home)]
        cli(*base, "registry", "add", "corp", url, "--root", str(root_file), *kind, check=True)
        return base

    def check(url: str) -> None:
        base = client(tmp_path / "home-ok", url)
        cli(*base, "install", "acme/tools", check=True)
        lock = (tmp_path / "home-ok" / "ontoskills.lock").read_text()
        assert "signed = true" in lock
        assert cli(*base, "install", "acme/other").returncode == 7  # listed, not mirrored
        # a file changed in the mirror is not the signed target: exit 4, nothing installed
        ttl = next((mirror / "packages/acme/tools").rglob("*.ttl"))
        ttl.write_bytes(ttl.read_bytes() + b"\n# tampered\n")
        base = client(tmp_path / "home-bad", url)
        fresh = {"ONTOSKILLS_CACHE_DIR": str(tmp_path / "cache-bad")}  # else: the good blob
        proc = cli(*base, "install", "acme/tools", extra_env=fresh)
        assert proc.returncode == 4, proc.stderr
        assert not (tmp_path / "home-bad" / "ontologies" / "author").exists()

    if served == "folder":
        check(str(mirror))
    else:
        with FaultServer(mirror) as srv:
            check(srv.url)


def test_signed_lock_mirrored_then_ci_from_the_mirror(
    cli_inproc: CliRunner, signed_origin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    cli = cli_inproc
    home = Path(env["ONTOSKILLS_HOME"])
    root_file = tmp_path / "trusted-root.json"
    shutil.copyfile(signed_origin / "metadata" / "root.json", root_file)
    cli("registry", "add", "corp", str(signed_origin), "--root", str(root_file), check=True)
    cli("install", "acme/tools", check=True)
    team = tmp_path / "team" / "ontoskills.lock"
    team.parent.mkdir()
    shutil.copyfile(home / "ontoskills.lock", team)
    mirror = tmp_path / "mirror"
    done = run_json(cli, "mirror", "--from-lock", str(team), "--to", str(mirror))
    assert done["signed"] is True
    assert (mirror / "metadata" / "timestamp.json").is_file()
    shutil.move(signed_origin, tmp_path / "gone")
    home2 = tmp_path / "home2"
    home2.mkdir()
    shutil.copyfile(team, home2 / "ontoskills.lock")
    cli("--home", str(home2), "--offline", "--registry", str(mirror), "ci", check=True)
    assert tree(home2) == tree(home)


def test_one_mirror_per_folder_at_a_time(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path
) -> None:
    import hashlib
    import tempfile

    import filelock

    mirror = tmp_path / "mirror"
    key = hashlib.sha256(str(mirror.resolve()).encode()).hexdigest()[:16]
    held = filelock.FileLock(str(Path(tempfile.gettempdir()) / f"ontoskills-mirror-{key}.lock"))
    with held:  # another `mirror` into the same folder is running
        proc = cli_inproc(
            "--registry", str(origin), "mirror", "acme/design", "--to", str(mirror),
            extra_env={"ONTOSKILLS_LOCK_TIMEOUT": "0"},
        )  # fmt: skip
    assert proc.returncode == 1 and "another `mirror`" in proc.stderr
    assert not mirror.exists()


def test_refuses_the_home_the_project_and_what_contains_them(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path
) -> None:
    """--to is a folder the user names: never the home (or inside it), never the project
    whose tree and lock it holds, never a folder containing the registry; nothing changes."""
    cli = cli_inproc
    project = tmp_path / "proj"
    project.mkdir()
    (project / "ontoskills.toml").write_text("[dependencies]\n")
    cli("--project", str(project), "--registry", str(origin), "add", "acme/devtools", check=True)
    before = files(project)
    home = project / ".ontoskills"
    for bad in (home, home / "ontologies", project, tmp_path):
        proc = cli(
            "--project", str(project), "--registry", str(origin),
            "mirror", "acme/devtools", "--to", str(bad),
        )  # fmt: skip
        assert proc.returncode == 2, (bad, proc.stderr)
        assert files(project) == before, bad


def test_http_mirror_lists_every_file_a_plain_site_cannot(
    cli_inproc: CliRunner, origin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """Static HTTP cannot list folders: from a plain site a package.json without `files`
    installs only its modules (a warning says so); from a mirror, mirror.json lists every
    file, so the tree equals the one installed from the origin folder, exec bits included.
    A mirror.json with an unsafe path is ignored whole (back to the warning), never used."""
    cli = cli_inproc
    cli("--registry", str(origin), "install", "acme/devtools", check=True)
    want = tree(Path(env["ONTOSKILLS_HOME"]))
    assert "acme/devtools/debugging/scripts/run.sh" in want
    mirror = tmp_path / "mirror"
    cli("--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror), check=True)

    with FaultServer(origin) as plain:  # the control: a plain static site of the origin
        home = tmp_path / "plain"
        proc = cli("--home", str(home), "--registry", plain.url, "install", "acme/devtools")
        assert proc.returncode == 0 and "cannot list folders" in proc.stderr
        assert "acme/devtools/debugging/scripts/run.sh" not in tree(home)

    origin.rename(tmp_path / "gone")
    with FaultServer(mirror) as srv:
        home = tmp_path / "mirrored"
        proc = cli("--home", str(home), "--registry", srv.url, "install", "acme/devtools")
        assert proc.returncode == 0 and "cannot list folders" not in proc.stderr, proc.stderr
        assert tree(home) == want

    state = json.loads((mirror / "mirror.json").read_bytes())
    (rec,) = state["packages"].values()
    rec["sizes"]["../../outside.sh"] = 3
    (mirror / "mirror.json").write_text(json.dumps(state))
    with FaultServer(mirror) as srv:
        home = tmp_path / "hostile"
        proc = cli("--home", str(home), "--registry", srv.url, "install", "acme/devtools")
        assert proc.returncode == 0 and "cannot list folders" in proc.stderr
        assert not list(tmp_path.rglob("outside.sh"))
