"""Issue 22 classes 1 and 6: ontoskills never deletes what it cannot prove it wrote, and
decides from metadata before it writes.

Every case runs the real CLI (in-process entry, `tests/helpers/inproc.py`; the limits are
read at process start, so those cases run in a subprocess) against real folders, and checks
that the user's files are byte-identical afterwards (contents and modes), with the exit code
and the one-line `error:` + `hint:` the docs promise.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from ontoskills.publish.registry import init_registry
from tests.conftest import CliRunner
from tests.hardening.hostile_check import snapshot
from tests.publish.conftest import make_source

MARKER = ".ontoskills-output"
CACHE_TAG = "CACHEDIR.TAG"


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    return cli_inproc


def refused(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """Exit `code`, one `error:` line naming what it must, then one `hint:` line (after
    progress lines, if the verb prints any)."""
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()[-2:]
    assert proc.stderr.count("error: ") == 1, proc.stderr
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def project(root: Path) -> Path:
    """A user's project folder: an npm package.json, sources, a hidden file."""
    (root / "src").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "my-app", "version": "1.0.0"}\n')
    (root / "src" / "index.js").write_text("console.log('precious')\n")
    (root / ".env").write_text("SECRET=keep\n")
    return root


def pack(cli: CliRunner, src: Path, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return cli("pack", "--from-skill-md", str(src), "--out", str(out), extra_env=env or None)


# --------------------------------------------------------------- pack --out: containment
def test_pack_out_holding_a_users_package_json_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    out = project(tmp_path / "my-app")
    before, src_before = snapshot(out), snapshot(src)
    line = refused(pack(cli, src, out), 2, str(out), "did not write")
    assert "package.json" in line or "src" in line or ".env" in line
    assert snapshot(out) == before and snapshot(src) == src_before


def test_pack_out_a_parent_of_the_sources_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    out = project(tmp_path / "my-app")
    src = make_source(out / "skills")
    before = snapshot(out)
    refused(pack(cli, src, out), 2, str(out), "contains the sources", str(src))
    assert snapshot(out) == before


def test_pack_out_equal_to_the_sources_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    before = snapshot(src)
    refused(pack(cli, src, src), 2, "is the sources")
    assert snapshot(src) == before  # not even an ontoskill.ttl written into it


def test_pack_out_inside_the_sources_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    before = snapshot(src)
    refused(pack(cli, src, src / "dist"), 2, "is inside the sources")
    assert snapshot(src) == before


@pytest.mark.parametrize("target", ["sources", "project"])
def test_symlinked_out_is_judged_by_what_it_points_at(
    tmp_path: Path, cli: CliRunner, target: str
) -> None:
    src = make_source(tmp_path / "src")
    dest = src if target == "sources" else project(tmp_path / "my-app")
    link = tmp_path / "out"
    link.symlink_to(dest, target_is_directory=True)
    before = snapshot(dest)
    refused(pack(cli, src, link), 2, str(link))
    assert link.is_symlink() and snapshot(dest) == before


def test_pack_out_an_installed_package_in_the_home_is_refused(
    tmp_path: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    """An installed package folder holds a package.json: the old code replaced it whole."""
    home = Path(env["ONTOSKILLS_HOME"])
    pkg = home / "ontologies/author/acme/tools"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text('{"package_id": "acme/tools"}\n')
    (home / "ontoskills.lock").write_text("lock_version = 1\n")
    src = make_source(tmp_path / "src")
    before = snapshot(home)
    refused(pack(cli, src, pkg), 2, "is inside the home", str(home))
    refused(pack(cli, src, home / "dist"), 2, "is inside the home")
    assert snapshot(home) == before


def test_pack_out_in_the_cache_or_holding_the_lockfile_is_refused(
    tmp_path: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    cache = Path(env["ONTOSKILLS_CACHE_DIR"])
    (cache / "blobs").mkdir(parents=True)
    src = make_source(tmp_path / "src")
    refused(pack(cli, src, cache / "out"), 2, "is inside the cache")
    assert sorted(p.name for p in cache.iterdir()) == ["blobs"]
    proj = tmp_path / "proj"
    proj.mkdir()
    lock = proj / "ontoskills.lock"
    lock.write_text("lock_version = 1\n")
    refused(pack(cli, src, proj, ONTOSKILLS_LOCKFILE=str(lock)), 2, "the lockfile's folder")
    assert lock.read_text() == "lock_version = 1\n"


# --------------------------------------------------------------- pack --out: ownership
def test_repack_replaces_our_output_and_keeps_nothing_stale(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    pack(cli, src, out).check_returncode()
    assert (out / MARKER).is_file()
    (src / "format" / "SKILL.md").unlink()
    (src / "format").rmdir()
    proc = pack(cli, src, out)
    assert proc.returncode == 0, proc.stderr
    assert not (out / "format").exists()  # the old output was replaced whole
    listed = {f["path"] for f in json.loads((out / "package.json").read_text())["files"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert on_disk == listed | {"package.json", MARKER}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_file_added_to_our_output_is_never_deleted(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    pack(cli, src, out).check_returncode()
    (out / "lint" / "notes.md").write_text("my notes\n")
    before = snapshot(out)
    refused(pack(cli, src, out), 2, str(out), "lint/notes.md")
    assert snapshot(out) == before


def test_an_output_without_our_marker_is_not_replaced(tmp_path: Path, cli: CliRunner) -> None:
    """An output of an older version (no marker) looks like any packed folder: kept."""
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    pack(cli, src, out).check_returncode()
    (out / MARKER).unlink()
    before = snapshot(out)
    refused(pack(cli, src, out), 2, str(out))
    assert snapshot(out) == before


def test_a_failed_repack_leaves_the_previous_output(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    pack(cli, src, out).check_returncode()
    before = snapshot(out)
    (src / "broken.ttl").write_text("this is not turtle <<<\n")  # copied, then refused by pack
    proc = pack(cli, src, out)
    assert proc.returncode == 4, proc.stderr
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_a_killed_packs_leftovers_are_recognised_by_name_and_marker(
    tmp_path: Path, cli: CliRunner
) -> None:
    """A kill between the two renames leaves the previous output aside: it goes back; a
    half-built new one is removed; a look-alike folder without our marker is left alone."""
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    pack(cli, src, out).check_returncode()
    aside = tmp_path / ".out.ontoskills-old-99999"
    out.rename(aside)
    half = tmp_path / ".out.ontoskills-new-99998"
    half.mkdir()
    (half / MARKER).write_bytes((aside / MARKER).read_bytes().splitlines(keepends=True)[0])
    (half / "partial.bin").write_bytes(b"x")
    lookalike = tmp_path / ".out.ontoskills-new-99997"
    lookalike.mkdir()
    (lookalike / "mine.txt").write_text("mine\n")
    assert pack(cli, src, out).returncode == 0
    assert (out / "package.json").is_file() and not aside.exists() and not half.exists()
    assert (lookalike / "mine.txt").read_text() == "mine\n"


def test_an_empty_out_is_used(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    out = tmp_path / "out"
    out.mkdir()
    assert pack(cli, src, out).returncode == 0
    assert (out / "package.json").is_file() and (out / MARKER).is_file()


# ------------------------------------------------------------------------- cache clean
def clean(cli: CliRunner, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return cli("cache", "clean", extra_env={"ONTOSKILLS_CACHE_DIR": str(cache), **env})


def test_cache_dir_equal_to_the_home_is_refused(cli: CliRunner, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    (home / "ontologies").mkdir(parents=True)
    (home / "ontoskills.lock").write_text("lock_version = 1\n")
    (home / "state").mkdir()
    (home / "state" / "home.lock").write_text("")
    before = snapshot(home)
    refused(clean(cli, home), 2, "is the home", str(home))
    refused(clean(cli, home / "ontologies"), 2, "is inside the home")
    refused(clean(cli, home.parent), 2, "contains the home")
    assert snapshot(home) == before


def test_cache_dir_equal_to_the_users_home_folder_is_refused(
    tmp_path: Path, cli: CliRunner
) -> None:
    user = tmp_path / "user"
    (user / "code" / "git").mkdir(parents=True)
    (user / "notes.txt").write_text("mine\n")
    before = snapshot(user)
    refused(clean(cli, user, HOME=str(user)), 2, str(user))
    assert snapshot(user) == before


def test_cache_dir_a_folder_with_user_files_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    folder = tmp_path / "work"
    (folder / "blobs").mkdir(parents=True)
    (folder / "git").mkdir()
    (folder / "git" / "my-repo.txt").write_text("mine\n")
    (folder / "thesis.tex").write_text("\\begin{document}\n")
    before = snapshot(folder)
    refused(clean(cli, folder), 2, str(folder), "thesis.tex")
    assert snapshot(folder) == before


def test_cache_dir_a_parent_of_the_lockfile_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    proj = tmp_path / "proj"
    (proj / "blobs").mkdir(parents=True)
    lock = proj / "ontoskills.lock"
    lock.write_text("lock_version = 1\n")
    before = snapshot(proj)
    refused(clean(cli, proj, ONTOSKILLS_LOCKFILE=str(lock)), 2, "the lockfile's folder")
    refused(clean(cli, tmp_path, ONTOSKILLS_LOCKFILE=str(lock)), 2, "contains")
    assert snapshot(proj) == before


def test_cache_dir_a_local_registry_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    reg = tmp_path / "reg"
    init_registry(reg, git=False)
    before = snapshot(reg)
    refused(clean(cli, reg, ONTOSKILLS_REGISTRY=str(reg)), 2, "the registry")
    assert snapshot(reg) == before


def test_cache_clean_of_our_cache_keeps_what_we_did_not_write(
    tmp_path: Path, cli: CliRunner
) -> None:
    """A cache ontoskills created carries CACHEDIR.TAG; a file the user dropped in stays."""
    from ontoskills.paths import Cache

    cache = Cache(tmp_path / "cache")
    cache.store_blob("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", b"hello")
    assert (cache.root / CACHE_TAG).is_file()
    (cache.root / "keep.txt").write_text("mine\n")
    proc = clean(cli, cache.root)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in cache.root.iterdir()) == [CACHE_TAG, "keep.txt"]
    assert clean(cli, cache.root).returncode == 0  # nothing of ours left: still fine
    (cache.root / "keep.txt").unlink()
    cache.store_blob("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", b"hello")
    assert clean(cli, cache.root).returncode == 0
    assert not cache.root.exists()  # ours alone: removed whole


def test_an_untagged_cache_of_known_folders_is_still_cleaned(
    tmp_path: Path, cli: CliRunner
) -> None:
    """Caches made before the tag hold only our folder names: they count as ours."""
    cache = tmp_path / "old-cache"
    for name in ("blobs/sha256/ab", "git/reg-0123456789abcdef", "http", "tmp"):
        (cache / name).mkdir(parents=True)
    (cache / "blobs/sha256/ab/abc").write_bytes(b"x" * 10)
    proc = cli("--json", "cache", "clean", extra_env={"ONTOSKILLS_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["freed_bytes"] == 10
    assert not cache.exists() or list(cache.iterdir()) == []


# ---------------------------------------------------------- publish into a folder registry
def test_publish_from_the_registrys_own_package_folder_is_refused(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = tmp_path / "reg"
    init_registry(reg, git=False)
    pkg = make_source(reg / "packages" / "acme" / "tools")
    cli("pack", "--from-skill-md", str(pkg)).check_returncode()
    (pkg / ".git-notes").write_text("not in the manifest\n")
    before = snapshot(pkg)
    proc = cli("publish", str(pkg), "--registry", str(reg))
    refused(proc, 2, "the sources")
    assert snapshot(pkg) == before


def test_publish_with_sources_inside_the_package_folder_is_refused(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = tmp_path / "reg"
    init_registry(reg, git=False)
    pkg = make_source(reg / "packages" / "acme" / "tools" / "src")
    cli("pack", "--from-skill-md", str(pkg)).check_returncode()
    before = snapshot(pkg)
    refused(cli("publish", str(pkg), "--registry", str(reg)), 2, "contains the sources")
    assert snapshot(pkg) == before


# --------------------------------------------------------------------------- keys
def test_retired_keys_never_move_through_a_symlink(tmp_path: Path, cli: CliRunner) -> None:
    reg, keys, elsewhere = tmp_path / "reg", tmp_path / "keys", tmp_path / "public"
    init = cli("registry", "init", "--signed", str(reg), "--keys", str(keys), "--no-git")
    assert init.returncode == 0, init.stderr
    elsewhere.mkdir()
    (keys / "retired").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(keys)
    proc = cli("registry", "keys", "rotate", "timestamp", str(reg), "--keys", str(keys))
    refused(proc, 2, "retired")
    assert list(elsewhere.iterdir()) == []
    assert snapshot(keys) == before


def test_keys_folder_holding_the_registry_is_refused(tmp_path: Path, cli: CliRunner) -> None:
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    reg = keys / "reg"
    proc = cli("registry", "init", "--signed", str(reg), "--keys", str(keys), "--no-git")
    refused(proc, 2, "contains the registry")
    assert list(keys.iterdir()) == []


# --------------------------------------------------- class 6: metadata before writing
def test_a_sparse_file_over_the_limit_is_refused_before_a_byte_is_written(
    tmp_path: Path, cli: CliRunner
) -> None:
    src = make_source(tmp_path / "src")
    with open(src / "lint" / "asset.bin", "wb") as fh:
        fh.truncate(1 << 30)  # 1 GiB, sparse: costs nothing until someone copies it
    out = tmp_path / "out"
    refused(pack(cli, src, out), 4, "lint/asset.bin", "per-file limit")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_the_package_limit_is_checked_before_copying(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    for n in range(3):
        with open(src / "lint" / f"part{n}.bin", "wb") as fh:
            fh.truncate(700 * 1024)
    out = tmp_path / "out"
    proc = pack(cli, src, out, ONTOSKILLS_MAX_PACKAGE_MB="1")
    refused(proc, 4, "package")
    assert not out.exists()
    # the same check when converting in place: no ontoskill.ttl is written either
    before = snapshot(src)
    proc = cli("pack", "--from-skill-md", str(src), extra_env={"ONTOSKILLS_MAX_PACKAGE_MB": "1"})
    refused(proc, 4, "package")
    assert snapshot(src) == before


def test_a_fifo_in_the_sources_is_refused_before_writing(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    os.mkfifo(src / "lint" / "pipe")
    out = tmp_path / "out"
    refused(pack(cli, src, out), 4, "lint/pipe", "not a regular file")
    assert not out.exists()


def test_modes_keep_only_the_executable_bit(tmp_path: Path, cli: CliRunner) -> None:
    src = make_source(tmp_path / "src")
    cases = {"suid.sh": 0o4755, "sgid.sh": 0o2755, "open.sh": 0o777, "shared.txt": 0o666}
    for name, mode in cases.items():
        path = src / "lint" / name
        path.write_text("x\n")
        os.chmod(path, mode)
    sticky = src / "lint" / "data"
    sticky.mkdir()
    (sticky / "f.txt").write_text("y\n")
    os.chmod(sticky, 0o1777)
    out = tmp_path / "out"
    proc = pack(cli, src, out)
    assert proc.returncode == 0, proc.stderr
    modes = {n: stat.S_IMODE((out / "lint" / n).stat().st_mode) for n in cases}
    assert modes == {"suid.sh": 0o755, "sgid.sh": 0o755, "open.sh": 0o755, "shared.txt": 0o644}
    assert stat.S_IMODE((out / "lint" / "data").stat().st_mode) & 0o7022 == 0
    assert stat.S_IMODE((out / "lint" / "data" / "f.txt").stat().st_mode) == 0o644
    files = json.loads((out / "package.json").read_text())["files"]
    assert {f["path"]: f["executable"] for f in files}["lint/shared.txt"] is False
