"""One verified store linked into homes (issue 24 item 4; docs/RELIABILITY.md "One verified
store"): package files are hardlinks of read-only blobs, re-verified before each link; an
edit through one home's link is refused by every home sharing it; `cache clean` breaks no
home; another filesystem falls back to copies; concurrent installs and kills lose nothing."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.catalog.verify import verify_tree
from ontoskills.errors import IntegrityError
from ontoskills.filelink import Placed, place_file
from ontoskills.install.store import DAMAGED_BLOB, SHARED_EDIT
from ontoskills.paths import Cache, Home
from tests.conftest import REPO, CliRunner
from tests.helpers.domain import Domain
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages

PKG = "acme/devtools"
EXEC = "debugging/scripts/run.sh"  # the sample package's one executable
EDITED = "reviewing/ontoskill.ttl"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


@pytest.fixture
def homes(tmp_path: Path, env: dict[str, str], registry: Path) -> tuple[Domain, Domain]:
    """Two homes (two project trees) sharing the `env` cache, both holding PKG."""
    a, b = Domain(home=tmp_path / "a"), Domain(home=tmp_path / "b")
    a.install(PKG, registry=str(registry))
    b.install(PKG, registry=str(registry))
    return a, b


def _cache(env: dict[str, str]) -> Cache:
    return Cache(Path(env["ONTOSKILLS_CACHE_DIR"]))


def _files(domain: Domain) -> dict[str, lockfile.LockedFile]:
    return {f.path: f for f in domain.lock().packages[PKG].files}


def _installed(domain: Domain, path: str) -> Path:
    return domain.package_dir(PKG).joinpath(*path.split("/"))


def _edit_in_place(path: Path, *, keep_mtime: bool) -> None:
    """What an editor writing in place does (vim on a hardlinked file, `cp` onto it): same
    inode, same size, other bytes; with keep_mtime the mtime is put back (`cp -p`)."""
    before = path.stat()
    data = path.read_bytes()
    os.chmod(path, 0o644)  # a user's `:w!`; root would not even need it
    with open(path, "r+b") as fh:  # no truncation: the inode is kept
        fh.write(data.replace(b"Review", b"Hacked", 1))
    os.chmod(path, stat.S_IMODE(before.st_mode))
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.read_bytes() != data and path.stat().st_size == before.st_size


def test_files_are_hardlinks_of_read_only_blobs(
    homes: tuple[Domain, Domain], env: dict[str, str]
) -> None:
    a, b = homes
    cache = _cache(env)
    files = _files(a)
    assert files == _files(b)
    for path, f in files.items():
        fa, fb, blob = _installed(a, path), _installed(b, path), cache.blob(f.sha256)
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == f.sha256
        if f.executable:  # a mode belongs to the inode: executables are copies of their own
            assert not os.path.samefile(fa, blob) and not os.path.samefile(fb, blob)
            assert os.stat(fa).st_mode & 0o777 == 0o755
            assert os.stat(blob).st_mode & 0o777 == 0o444
            continue
        assert os.path.samefile(fa, blob) and os.path.samefile(fb, blob), path
        assert os.stat(blob).st_mode & 0o777 == 0o444
    report = a.doctor()
    assert report.healthy and report.store.issues == []
    assert report.store.linked == len(files) - 1 and report.store.copies == 1


def test_a_lock_restored_into_a_new_home_links_from_the_store(
    homes: tuple[Domain, Domain], tmp_path: Path, env: dict[str, str]
) -> None:
    a, _ = homes
    (tmp_path / "c").mkdir()  # the lock names the registry relative to its folder
    shutil.copy(a.lock_path, tmp_path / "c/ontoskills.lock")
    c = Domain(home=tmp_path / "c")
    c.ci()
    blob = _cache(env).blob(_files(a)[EDITED].sha256)
    assert os.path.samefile(_installed(c, EDITED), blob)
    assert os.stat(blob).st_nlink == 4  # the store + three homes: one copy on disk


@pytest.mark.parametrize("verb", ["install", "ci"])
def test_a_damaged_blob_is_never_linked_but_dropped_and_refetched(
    registry: Path, tmp_path: Path, env: dict[str, str], verb: str
) -> None:
    a = Domain(home=tmp_path / "a")
    a.install(PKG, registry=str(registry))
    cache = _cache(env)
    f = _files(a)[EDITED]
    blob = cache.blob(f.sha256)
    os.unlink(blob)  # bit rot in the store alone (home a keeps its own inode)
    blob.write_bytes(b"@prefix oc: <https://ontoskills.sh/ontology#> .\n# rotten\n")
    if verb == "ci":
        (tmp_path / "b").mkdir()
        shutil.copy(a.lock_path, tmp_path / "b/ontoskills.lock")
        b = Domain(home=tmp_path / "b")
        b.ci()
    else:
        b = Domain(home=tmp_path / "b")
        b.install(PKG, registry=str(registry))
    got = _installed(b, EDITED)
    assert hashlib.sha256(got.read_bytes()).hexdigest() == f.sha256
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == f.sha256  # dropped, refetched
    assert os.path.samefile(got, blob)  # and the refetched bytes are the store's new blob
    assert a.doctor().healthy and b.doctor().healthy


def test_doctor_reports_a_blob_that_no_longer_matches(
    registry: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    a = Domain(home=tmp_path / "a")
    a.install(PKG, registry=str(registry))
    blob = _cache(env).blob(_files(a)[EDITED].sha256)
    os.unlink(blob)
    blob.write_bytes(b"rotten")
    report = a.doctor()
    assert [(i.path, i.kind) for i in report.store.issues] == [(EDITED, DAMAGED_BLOB)]
    assert not report.healthy and not report.drifted  # the home itself is intact: exit 1
    assert "cache clean" in report.store.issues[0].text()


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["plain", "mtime-restored"])
def test_an_edit_through_one_homes_link_is_refused_by_every_home(
    homes: tuple[Domain, Domain],
    env: dict[str, str],
    registry: Path,
    keep_mtime: bool,
    cli_inproc: CliRunner,
) -> None:
    """Home b verified its tree in fast mode (stat cache) before home a's user edited a
    file in place; b's next fast verification must hash it again and refuse it. With the
    mtime put back and the size unchanged, a cache of (size, mtime) alone was fooled: the
    inode's ctime, which no user can set, is what changed."""
    a, b = homes
    home_b = Home(b.home_path)
    assert verify_tree(home_b, b.lock(), "fast").bad == {}  # fills b's stat cache
    search_b = ("--home", str(b.home_path), "search", "review code", "--json")
    served = json.loads(cli_inproc(*search_b, check=True).stdout)["results"]
    assert served[0]["skill"] == f"{PKG}/reviewing"
    _edit_in_place(_installed(a, EDITED), keep_mtime=keep_mtime)
    # what b's `search` serves: not the edited skill, and it names the file on stderr
    proc = cli_inproc(*search_b, check=True)
    assert f"{PKG}/{EDITED}" in proc.stderr
    assert all(r["skill"] != f"{PKG}/reviewing" for r in json.loads(proc.stdout)["results"])
    assert "Hacked" not in proc.stdout
    for home, domain in ((Home(a.home_path), a), (home_b, b)):
        result = verify_tree(home, domain.lock(), "fast")
        assert result.bad == {PKG: {EDITED}}  # never served by search, show or serve
        report = domain.doctor()
        assert report.packages[PKG].modified == [EDITED]
        assert [(i.path, i.kind) for i in report.store.issues] == [(EDITED, SHARED_EDIT)]
        advice = report.store.issues[0].text()
        assert f"`ontoskills update --force {PKG}`" in advice
    # b takes the published bytes back with the advised command, as written (PKG came from
    # an ad-hoc --registry: `install --force PKG` would ask the configured registries):
    # the edited blob is dropped, a fresh one refetched
    command = advice.split("`")[1].split()[1:]
    proc = cli_inproc("--home", str(b.home_path), *command)
    assert proc.returncode == 0, proc.stderr
    assert b.doctor().healthy
    assert verify_tree(home_b, b.lock(), "fast").bad == {}
    blob = _cache(env).blob(_files(b)[EDITED].sha256)
    assert os.path.samefile(_installed(b, EDITED), blob)
    assert b"Hacked" in _installed(a, EDITED).read_bytes()  # a's edit is still a's


def test_cache_clean_breaks_no_home(
    homes: tuple[Domain, Domain],
    registry: Path,
    tmp_path: Path,
    env: dict[str, str],
    cli_inproc: CliRunner,
) -> None:
    a, _ = homes
    before = {p: _installed(a, p).read_bytes() for p in _files(a)}
    shared = sum({f.sha256: f.size for f in _files(a).values() if not f.executable}.values())
    blobs = sum(b.stat().st_size for b in _cache(env).blobs.rglob("*") if b.is_file())
    freed = _cache(env).clean()
    assert not _cache(env).blobs.exists()
    # linked blobs live on in the homes: deleting them freed nothing (the rest: the
    # executable's blob, the checks' verdicts)
    assert blobs - shared <= freed < shared
    assert {p: _installed(a, p).read_bytes() for p in _files(a)} == before
    assert a.doctor().healthy
    # a later install fills the store again; a's files are intact copies it could share
    Domain(home=tmp_path / "c").install(PKG, registry=str(registry))
    report = a.doctor()
    assert report.healthy and report.store.linked == 0
    assert report.store.relinkable == len(before) - 1  # all but the executable
    # doctor's advice, run as written, links them (`install --force PKG` kept the copies:
    # a clean package is "already up to date", and PKG's ad-hoc registry is not configured)
    said = cli_inproc("--home", str(a.home_path), "doctor", check=True).stderr
    advice = said.split("`cache clean`): ")[1].split("`")[1].split()
    assert advice == ["ontoskills", "ci"], said
    cli_inproc("--home", str(a.home_path), *advice[1:], check=True)
    report = a.doctor()
    assert report.healthy and report.store.relinkable == 0
    assert report.store.linked == len(before) - 1


@pytest.fixture
def other_fs(tmp_path: Path) -> Iterator[Path]:
    """A folder on another filesystem than tmp_path (a real EXDEV for os.link)."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second filesystem (/dev/shm) here")
    folder = Path(tempfile.mkdtemp(prefix="ontoskills-store-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_place_file_copies_across_filesystems_and_never_follows_a_link(
    other_fs: Path, tmp_path: Path
) -> None:
    src = other_fs / "src"
    src.write_bytes(b"bytes")
    assert place_file(src, tmp_path / "copy") is Placed.COPIED
    assert (tmp_path / "copy").read_bytes() == b"bytes"
    assert os.stat(tmp_path / "copy").st_ino != os.stat(src).st_ino
    local = tmp_path / "local"
    local.write_bytes(b"here")
    assert place_file(local, tmp_path / "linked") is Placed.LINKED
    assert place_file(local, tmp_path / "own", link=False) in (Placed.CLONED, Placed.COPIED)
    assert os.stat(tmp_path / "own").st_ino != os.stat(local).st_ino
    (tmp_path / "planted").symlink_to(local)
    with pytest.raises(OSError):
        place_file(tmp_path / "planted", tmp_path / "no", link=False)
    assert not (tmp_path / "no").exists()


def test_a_store_on_another_filesystem_gives_verified_copies(
    registry: Path, tmp_path: Path, other_fs: Path
) -> None:
    a = Domain(home=tmp_path / "a", cache=other_fs / "cache")
    a.install(PKG, registry=str(registry))
    b = Domain(home=tmp_path / "b", cache=other_fs / "cache")
    b.install(PKG, registry=str(registry))
    cache = Cache(other_fs / "cache")
    for path, f in _files(a).items():
        assert cache.blob(f.sha256).is_file()
        assert os.stat(_installed(a, path)).st_nlink == 1
        assert not os.path.samefile(_installed(a, path), _installed(b, path))
    report = b.doctor()
    assert report.healthy and report.store.linked == 0
    assert report.store.copies == len(_files(a)) and report.store.relinkable == 0


def test_a_planted_blob_is_never_placed(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    secret = tmp_path / "secret"
    secret.write_bytes(b"secret")
    sha = hashlib.sha256(b"secret").hexdigest()
    cache.blob(sha).parent.mkdir(parents=True)
    cache.blob(sha).symlink_to(secret)  # even with the right hash: not a blob we wrote
    assert cache.link_blob(sha, tmp_path / "dest") is None
    assert not (tmp_path / "dest").exists() and not cache.blob(sha).is_symlink()
    os.mkfifo(cache.blob(sha))
    assert cache.link_blob(sha, tmp_path / "dest") is None  # and did not block
    assert not (tmp_path / "dest").exists() and not cache.blob(sha).exists()
    assert secret.read_bytes() == b"secret"


def _big_registry(root: Path) -> Path:
    skills = [SkillSpec(f"s{i:03d}", f"skill {i}", intents=(f"do {i}",)) for i in range(40)]
    assets = {
        f"s{i:03d}/data/{j}.bin": (os.urandom(20_000), False) for i in range(40) for j in (0, 1)
    }
    return build_registry(root, [PackageSpec(id="big/pkg", skills=skills, assets=assets)])


def _cli(home: Path, reg: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ontoskills", "--home", str(home), "--registry", str(reg), *args],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _store_is_sound(cache: Cache, *, killed: bool = False) -> None:
    """Every blob hashes to its name and is read-only; no temp file is left (a killed
    process may leave one: never a blob, removed with the cache)."""
    for blob in cache.blobs.rglob("*"):
        if blob.is_file():
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name
            assert os.stat(blob).st_mode & 0o777 == 0o444
    assert killed or not cache.tmp.exists() or list(cache.tmp.iterdir()) == []


def test_concurrent_installs_into_two_homes_from_one_store(
    tmp_path: Path, env: dict[str, str]
) -> None:
    reg = _big_registry(tmp_path / "reg")
    cache = _cache(env)
    for round_ in range(2):
        homes = [tmp_path / f"r{round_}-{h}" for h in "ab"]
        procs = [_cli(h, reg, env, "install", "big/pkg") for h in homes]
        results = [(*p.communicate(timeout=180), p.returncode) for p in procs]
        assert [r[2] for r in results] == [0, 0], results
        for h in homes:
            report = Domain(home=h).doctor()
            assert report.healthy and report.store.issues == [], report.to_json()
        _store_is_sound(cache)
    # the racing homes share the store's inodes: at most the losers of a race keep a copy
    lock = lockfile.load(tmp_path / "r1-a" / "ontoskills.lock")
    linked = sum(
        os.path.samefile(cache.blob(f.sha256), tmp_path / "r1-b/ontologies/author/big/pkg" / f.path)
        for f in lock.packages["big/pkg"].files
    )
    assert linked >= len(lock.packages["big/pkg"].files) // 2


def test_kills_mid_install_lose_nothing_in_either_home(tmp_path: Path, env: dict[str, str]) -> None:
    """Home a holds the package (linked to the store); installs into home b are SIGKILLed
    at random points. a stays intact and verified, the store holds only sound blobs, and b
    converges on the next run."""
    reg = _big_registry(tmp_path / "reg")
    cache = _cache(env)
    a, b = Domain(home=tmp_path / "a"), Domain(home=tmp_path / "b")
    a.install("big/pkg", registry=str(reg))
    before = {f.path: f.sha256 for f in a.lock().packages["big/pkg"].files}
    rng = random.Random(24)
    killed = 0
    for _ in range(12):  # until 4 kills landed mid-run: a quiet machine finishes some first
        if killed >= 4:
            break
        shutil.rmtree(tmp_path / "b", ignore_errors=True)
        if rng.random() < 0.5:
            shutil.rmtree(cache.root, ignore_errors=True)  # a cold store half the time
        proc = _cli(tmp_path / "b", reg, env, "install", "big/pkg")
        time.sleep(rng.uniform(0.1, 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        killed += proc.returncode == -signal.SIGKILL
        assert a.doctor().healthy
        _store_is_sound(cache, killed=True)
    proc = _cli(tmp_path / "b", reg, env, "install", "big/pkg")
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert b.doctor().healthy and a.doctor().healthy
    assert {f.path: f.sha256 for f in b.lock().packages["big/pkg"].files} == before
    assert killed >= 1


def test_checks_judged_once_per_store_still_warn_and_refuse_in_every_home(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A file's Turtle and hidden-text checks are a function of its bytes: their verdict is
    kept beside its blob, so a second home skips the parse but not the warning, nor the
    --strict refusal; a verdict file that is not ours is judged again."""
    spec = PackageSpec(id="acme/hidden", skills=[SkillSpec("one", "Review\u200bcode")])
    reg = build_registry(tmp_path / "reg", [spec])
    a = Domain(home=tmp_path / "a")
    a.install("acme/hidden", registry=str(reg))
    assert any("invisible" in w for w in a.warnings)
    verdicts = list(_cache(env).root.glob("derived/checked-*/*/*"))
    assert verdicts  # what the second home reads instead of parsing
    b = Domain(home=tmp_path / "b")
    b.install("acme/hidden", registry=str(reg))
    assert any("invisible" in w for w in b.warnings)
    with pytest.raises(IntegrityError):
        Domain(home=tmp_path / "c").install("acme/hidden", registry=str(reg), strict=True)
    for verdict in verdicts:
        verdict.write_bytes(b"[" * 5000)  # planted junk: not a verdict, judged again
    d = Domain(home=tmp_path / "d")
    d.install("acme/hidden", registry=str(reg))
    assert any("invisible" in w for w in d.warnings)
