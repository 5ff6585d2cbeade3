"""What a new user reads, checked on the real CLI (round-3 trial): counts, next steps and
the names in error lines, each found by walking the product from scratch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.githttp import GitHttpServer, git_cli
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages


def test_mirror_counts_one_file_in_the_singular(cli_inproc: CliRunner, tmp_path: Path) -> None:
    origin = build_registry(tmp_path / "origin", sample_packages())
    mirror = tmp_path / "mirror"
    args = ("--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror))
    cli_inproc(*args, check=True)
    (origin / "packages/acme/devtools/LICENSE").write_bytes(b"A\n")  # one new file, 2 bytes
    again = cli_inproc(*args, check=True)
    assert "1 file copied (2 bytes)," in again.stderr, again.stderr
    assert "1 files" not in again.stderr


def test_a_missing_github_repository_is_named_not_just_its_host(
    cli_inproc: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`install github:acme/nope` used to say "git repository 127.0.0.1 not found": the user
    typed no host, and the repository they mistyped was not in the line."""
    git_cli()  # skips without the git binary (`git http-backend` serves the repositories)
    (tmp_path / "srv").mkdir()
    with GitHttpServer(tmp_path / "srv") as srv:
        monkeypatch.setenv("ONTOSKILLS_GITHUB_URL", srv.url_for("").rstrip("/"))
        proc = cli_inproc("install", "github:acme/nope")
    assert proc.returncode == 7, proc.stderr
    assert "git repository 127.0.0.1/acme/nope" in proc.stderr, proc.stderr
    assert not (tmp_path / "home" / "ontoskills.lock").exists()


def test_doctor_drift_ends_with_the_repair_and_the_repair_works(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """Exit 4 used to end with the warnings alone; the next step it names must really heal
    the home, and must say when it overwrites the user's edits."""
    origin = build_registry(tmp_path / "origin", sample_packages())
    cli_inproc("--registry", str(origin), "install", "acme/devtools", "acme/design", check=True)
    pkg = Path(env["ONTOSKILLS_HOME"]) / "ontologies" / "author" / "acme" / "devtools"
    victim = next(p for p in sorted(pkg.rglob("*.ttl")))
    victim.unlink()
    sick = cli_inproc("doctor")
    assert sick.returncode == 4
    step = "next: `ontoskills update --force acme/devtools` refetches them from their registry"
    assert step + "\n" in sick.stderr, sick.stderr  # no edits: no warning about them
    assert "acme/design" not in step and "healthy" not in sick.stderr
    # the step as printed, without --registry: the package came from an ad-hoc one, which
    # `install PKG` would not read (it resolves from the configured registries)
    cli_inproc("update", "--force", "acme/devtools", check=True)
    assert cli_inproc("doctor").returncode == 0

    victim.chmod(0o644)
    victim.write_bytes(victim.read_bytes() + b"# mine\n")
    edited = cli_inproc("doctor")
    assert edited.returncode == 4
    assert f"{step} (over your edits in acme/devtools: copy them first)" in edited.stderr


def test_info_lists_skills_by_id_and_marks_a_cut_description(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    long = "Use when " + "a very long trigger " * 8 + "TAIL"
    skills = [SkillSpec("zeta", "Short one."), SkillSpec("alpha", long)]  # manifest order z, a
    origin = build_registry(tmp_path / "origin", [PackageSpec("acme/kit", skills)])
    cli_inproc("--registry", str(origin), "install", "acme/kit", check=True)
    out = cli_inproc("info", "acme/kit", check=True).stdout.splitlines()
    rows = [line for line in out if line.startswith("  [")]
    assert [r.split("] ")[1].split(":")[0] for r in rows] == ["alpha", "zeta"]
    assert rows[0] == f"  [on ] alpha: {long[:89]}…" and "TAIL" not in rows[0]
    assert rows[1] == "  [on ] zeta: Short one."  # not cut: no mark


def test_remove_of_a_package_named_twice_removes_it_once(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    """`remove a/b a/b` used to fail "a/b is not installed" (exit 7) and remove nothing."""
    origin = build_registry(tmp_path / "origin", sample_packages())
    cli_inproc("--registry", str(origin), "install", "acme/devtools", "acme/design", check=True)
    proc = cli_inproc("remove", "acme/devtools", "acme/devtools", "--json")
    assert proc.returncode == 0, proc.stderr
    changes = json.loads(proc.stdout)["changes"]
    assert [(c["package_id"], c["action"]) for c in changes] == [("acme/devtools", "removed")]
    left = json.loads(cli_inproc("list", "--json", check=True).stdout)["packages"]
    assert [p["package"] for p in left] == ["acme/design"]


def test_update_of_a_package_named_twice_updates_it_once(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    """`update a/b a/b` staged a/b twice: exit 4, "cannot create 'package.json' (File
    exists)", and a hint telling the user to report the registry."""
    origin = build_registry(tmp_path / "origin", sample_packages())
    cli_inproc("--registry", str(origin), "install", "acme/devtools", check=True)
    proc = cli_inproc("update", "acme/devtools", "acme/devtools", "--json")
    assert proc.returncode == 0, proc.stderr
    changes = json.loads(proc.stdout)["changes"]
    assert [c["package_id"] for c in changes] == ["acme/devtools"]
    missing = cli_inproc("update", "acme/nope")
    assert missing.returncode == 7 and "error: acme/nope is not installed\n" in missing.stderr
