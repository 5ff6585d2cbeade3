"""install/ci/update/remove against folder registries, in-process (the domain: Session +
install()/update()/...; exit codes are the raised exception's). The CLI contract of these
verbs (output, exit codes, JSON) is in tests/cli/."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.errors import (
    IntegrityError,
    LocalChangesError,
    LockMissingError,
    LockOutdatedError,
    NotFoundError,
    TrustError,
    UnsafePathError,
    UsageError,
)
from tests.conftest import CliRunner
from tests.helpers.domain import Domain
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_install_whole_package_with_assets_and_exec_bits(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    # A configured registry: an ad-hoc --registry is capped at community (docs/CLI.md
    # "Trust of a registry"); this test is about the index's own tier.
    domain.add_registry("reg", registry)
    domain.install("acme/devtools")
    root = Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools"
    assert (root / "debugging/scripts/run.sh").stat().st_mode & stat.S_IXUSR
    assert not (root / "LICENSE").stat().st_mode & stat.S_IXUSR
    assert (root / "debugging/notes.md").read_bytes() == b"# notes\r\nwindows line endings\r\n"
    assert not (root / "debugging/intents.json").exists()  # only with --with-embeddings
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    pkg = lock.packages["acme/devtools"]
    assert pkg.trust_tier == "official"
    assert {f.path for f in pkg.files} == set(_tree(root))
    assert pkg.file("debugging/scripts/run.sh").executable


def test_with_embeddings_fetches_intents(
    domain: Domain, registry: Path, env: dict[str, str], tmp_path: Path
) -> None:
    from tests.helpers.tinymodel import build_tiny_model  # the encoder comes with embeddings

    model = build_tiny_model(tmp_path / "model")
    domain.install(
        "acme/design", registry=str(registry), with_embeddings=True, model_path=str(model)
    )
    root = Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/design"
    assert (root / "colorize/intents.json").is_file()
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    assert lock.packages["acme/design"].with_embeddings


def test_two_installs_give_byte_identical_locks(
    env: dict[str, str], registry: Path, tmp_path: Path
) -> None:
    locks = []
    for n in range(2):
        proj = tmp_path / f"proj{n}"
        shutil.copytree(registry, proj / "reg")
        Domain(proj / "home", proj / "ontoskills.lock", registry=str(proj / "reg")).install(
            "acme/design", "acme/devtools"
        )
        locks.append((proj / "ontoskills.lock").read_bytes())
    assert locks[0] == locks[1]
    assert str(tmp_path).encode() not in locks[0]
    assert b"\r\n" not in locks[0]


def test_index_tier_wins_over_package_claim(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    domain.install("acme/design", registry=str(registry))
    assert any("declares trust tier 'official'" in w for w in domain.warnings)
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    assert lock.packages["acme/design"].trust_tier == "community"


def test_min_trust_refuses_lower_tier(domain: Domain, registry: Path, env: dict[str, str]) -> None:
    with pytest.raises(TrustError) as err:
        domain.install("acme/design", registry=str(registry), min_trust="verified")
    assert err.value.exit_code == 4
    assert "below --min-trust" in err.value.message
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()


def test_skill_install_takes_dependency_closure(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    domain.install("acme/devtools/debugging", registry=str(registry))
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    pkg = lock.packages["acme/devtools"]
    assert sorted(pkg.skills) == ["debugging", "planning"]  # planning is a dependency
    paths = {f.path for f in pkg.files}
    assert "reviewing/ontoskill.ttl" not in paths
    assert "LICENSE" in paths  # package-level files always come along


def test_unknown_package_and_skill_exit_7(domain: Domain, registry: Path) -> None:
    with pytest.raises(NotFoundError) as err:
        domain.install("acme/devtool", registry=str(registry))
    assert err.value.exit_code == 7
    assert "did you mean acme/devtools" in f"{err.value.message} {err.value.hint}"
    with pytest.raises(NotFoundError):
        domain.install("acme/devtools/nope", registry=str(registry))


def test_bad_spec_is_usage_error(domain: Domain, registry: Path) -> None:
    with pytest.raises(UsageError) as err:
        domain.install("Not-A-Spec", registry=str(registry))
    assert err.value.exit_code == 2


def test_tampered_registry_file_exit_4_and_nothing_changes(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/devtools", registry=str(registry))
    lock_before = (home / "ontoskills.lock").read_bytes()
    tree_before = _tree(home / "ontologies")
    (registry / "packages/acme/devtools/planning/ontoskill.ttl").write_text(
        '@prefix oc: <https://ontoskills.sh/ontology#> .\noc:x oc:y "evil" .\n'
    )
    shutil.rmtree(home / "ontologies/author/acme/devtools/reviewing")  # force a re-fetch
    # ... from the registry: the verified store (which a folder registry fills too) would
    # otherwise satisfy the lock without reading the changed file
    shutil.rmtree(env["ONTOSKILLS_CACHE_DIR"])
    tree_damaged = _tree(home / "ontologies")
    with pytest.raises(IntegrityError) as err:
        domain.install(frozen=True)
    assert err.value.exit_code == 4
    assert "planning/ontoskill.ttl" in err.value.message
    assert (home / "ontoskills.lock").read_bytes() == lock_before
    assert _tree(home / "ontologies") == tree_damaged
    assert tree_before != tree_damaged


def test_published_hash_mismatch_is_refused(
    tmp_path: Path, domain: Domain, env: dict[str, str]
) -> None:
    spec = PackageSpec(id="acme/hashed", skills=[SkillSpec("one", "one skill")], files_array=True)
    reg = build_registry(tmp_path / "reg", [spec])
    (reg / "packages/acme/hashed/one/ontoskill.ttl").write_text("# changed after publishing\n")
    with pytest.raises(IntegrityError) as err:
        domain.install("acme/hashed", registry=str(reg))
    assert err.value.exit_code == 4
    assert "sha256" in err.value.message
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/hashed").exists()


@pytest.mark.parametrize("bad_path", ["../../x.ttl", "/abs.ttl", "a\\b.ttl", "https://other/x.ttl"])
def test_traversal_paths_exit_4_write_nothing(
    tmp_path: Path, domain: Domain, env: dict[str, str], bad_path: str
) -> None:
    spec = PackageSpec(
        id="evil/pkg",
        skills=[SkillSpec("s", "s")],
        manifest_extra={"modules": ["s/ontoskill.ttl", bad_path]},
    )
    reg = build_registry(tmp_path / "reg", [spec])
    before = set(tmp_path.rglob("*"))
    with pytest.raises(UnsafePathError) as err:
        domain.install("evil/pkg", registry=str(reg))
    assert err.value.exit_code == 4
    assert "unsafe" in err.value.message
    after = set(tmp_path.rglob("*"))
    created = {p for p in after - before if p.is_file()}
    # Only our own machine state may appear (the process lock); no package file anywhere.
    assert all("state" in p.parts for p in created), created
    assert not (tmp_path.parent / "x.ttl").exists() and not Path("/abs.ttl").exists()


def test_locked_after_index_change_exit_3(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    # A configured registry: an ad-hoc --registry is capped at community (docs/CLI.md
    # "Trust of a registry"); this test is about the index's own tier.
    domain.add_registry("reg", registry)
    domain.install("acme/devtools")
    domain.install("acme/devtools", locked=True)
    index = json.loads((registry / "index.json").read_text())
    index["packages"][0]["trust_tier"] = "verified"
    (registry / "index.json").write_text(json.dumps(index))
    before = (home / "ontoskills.lock").read_bytes()
    with pytest.raises(LockOutdatedError) as err:
        domain.install("acme/devtools", locked=True)
    assert err.value.exit_code == 3
    assert (home / "ontoskills.lock").read_bytes() == before


def test_update_refuses_trust_downgrade(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    # A configured registry: an ad-hoc --registry is capped at community (docs/CLI.md
    # "Trust of a registry"); this test is about the index's own tier.
    domain.add_registry("reg", registry)
    domain.install("acme/devtools")
    index = json.loads((registry / "index.json").read_text())
    index["packages"][0]["trust_tier"] = "community"
    (registry / "index.json").write_text(json.dumps(index))
    with pytest.raises(TrustError) as err:
        domain.update("acme/devtools")
    assert err.value.exit_code == 4 and "--allow-trust-downgrade" in (err.value.hint or "")
    domain.update("acme/devtools", allow_trust_downgrade=True)
    lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    assert lock.packages["acme/devtools"].trust_tier == "community"


def test_update_refuses_to_clobber_user_edits(
    domain: Domain, registry: Path, env: dict[str, str]
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/devtools", registry=str(registry))
    edited = home / "ontologies/author/acme/devtools/debugging/notes.md"
    edited.write_text("my notes")
    (registry / "packages/acme/devtools/LICENSE").write_text("Apache-2.0\n")
    with pytest.raises(LocalChangesError) as err:
        domain.update()
    assert err.value.exit_code == 1 and "debugging/notes.md" in err.value.message
    assert edited.read_text() == "my notes"
    domain.update(force=True)
    assert edited.read_bytes() == b"# notes\r\nwindows line endings\r\n"
    assert (home / "ontologies/author/acme/devtools/LICENSE").read_text() == "Apache-2.0\n"


def test_ci_reproduces_tree_in_empty_home(
    env: dict[str, str], registry: Path, tmp_path: Path
) -> None:
    lock_path = tmp_path / "proj/ontoskills.lock"
    first = tmp_path / "home1"
    Domain(first, lock_path, registry=str(registry)).install("acme/devtools", "acme/design")
    second = tmp_path / "home2"
    (second / "ontologies/author/stray/pkg").mkdir(parents=True)
    (second / "ontologies/author/stray/pkg/x.ttl").write_text("stray")
    report = Domain(second, lock_path, cache=tmp_path / "cold-cache").ci()
    assert {c.package_id: c.action for c in report.changes} == {
        "acme/design": "installed",  # the empty home never had them (issue 24)
        "acme/devtools": "installed",
        "stray/pkg": "removed",
    }
    assert _tree(first / "ontologies/author") == _tree(second / "ontologies/author")
    assert (second / "ontologies/system/index.enabled.ttl").is_file()  # reference servers


def test_ci_without_lock_exit_3(env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(LockMissingError) as err:
        Domain(lockfile=tmp_path / "none.lock").ci()
    assert err.value.exit_code == 3
    assert "no lockfile" in err.value.message


def test_remove_and_enable_disable(domain: Domain, registry: Path, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/devtools", "acme/design", registry=str(registry))
    domain.disable("acme/devtools/reviewing")
    lock = lockfile.load(home / "ontoskills.lock")
    assert lock.packages["acme/devtools"].skills == {
        "debugging": True,
        "planning": True,
        "reviewing": False,
    }
    with pytest.raises(NotFoundError):
        domain.disable("acme/devtools/nope")
    domain.remove("acme/design")
    assert not (home / "ontologies/author/acme/design").exists()
    lock = lockfile.load(home / "ontoskills.lock")
    assert list(lock.packages) == ["acme/devtools"]
    with pytest.raises(NotFoundError):
        domain.remove("acme/design")


def test_doctor_reports_drift(domain: Domain, registry: Path, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/devtools", registry=str(registry))
    assert domain.doctor().healthy
    target = home / "ontologies/author/acme/devtools/debugging/scripts/run.sh"
    os.chmod(target, 0o644)
    (home / "ontologies/author/acme/devtools/planning/ontoskill.ttl").unlink()
    report = domain.doctor()
    assert report.drifted  # `doctor` exits 4 (tests/cli/test_exit_codes.py)
    drift = report.packages["acme/devtools"]
    assert drift.missing == ["planning/ontoskill.ttl"]
    assert drift.mode == ["debugging/scripts/run.sh"]
    domain.install()  # repairs from the lock
    assert domain.doctor().healthy


def test_list_info_json(cli_inproc: CliRunner, domain: Domain, registry: Path) -> None:
    # A configured registry: an ad-hoc --registry is capped at community (docs/CLI.md
    # "Trust of a registry"); this test is about the index's own tier.
    cli = cli_inproc  # what the verbs print: the CLI entry, in this process
    cli("registry", "add", "reg", str(registry), check=True)
    domain.install("acme/devtools")
    listing = json.loads(cli("list", "--json", check=True).stdout)
    assert listing["schema_version"] == 1
    assert listing["packages"][0]["package"] == "acme/devtools"
    info = json.loads(cli("info", "acme/devtools", "--json", check=True).stdout)
    assert info["trust_tier"] == "official"
    assert {s["id"] for s in info["skills"]} == {"debugging", "planning", "reviewing"}
    assert cli("info", "acme/none").returncode == 7


def test_real_superpowers_from_folder(domain: Domain, ontostore: Path, env: dict[str, str]) -> None:
    # A configured registry: an ad-hoc --registry is capped at community (docs/CLI.md
    # "Trust of a registry"); this test is about the index's own tier.
    domain.add_registry("store", ontostore)
    domain.install("obra/superpowers")
    home = Path(env["ONTOSKILLS_HOME"])
    root = home / "ontologies/author/obra/superpowers"
    src = ontostore / "packages/obra/superpowers"
    expected = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}
    expected = {p for p in expected if not p.endswith("intents.json")}
    assert set(_tree(root)) == expected
    assert os.access(root / "systematic-debugging/find-polluter.sh", os.X_OK)
    lock = lockfile.load(home / "ontoskills.lock")
    assert lock.packages["obra/superpowers"].trust_tier == "official"
    assert all(len(f.sha256) == 64 for f in lock.packages["obra/superpowers"].files)


def test_default_enabled_false_is_honoured_unless_asked_for_by_name(
    domain: Domain, tmp_path: Path, env: dict[str, str]
) -> None:
    spec = PackageSpec(
        id="acme/bench",
        skills=[
            SkillSpec("visible", "Shown by default", intents=("do a thing",)),
            SkillSpec("opt-in", "Off until enabled", intents=("other",), default_enabled=False),
        ],
    )
    reg = build_registry(tmp_path / "bench-reg", [spec])
    home = Path(env["ONTOSKILLS_HOME"])
    domain.install("acme/bench", registry=str(reg))
    skills = lockfile.load(home / "ontoskills.lock").packages["acme/bench"].skills
    assert skills == {"visible": True, "opt-in": False}
    domain.enable("acme/bench/opt-in")
    domain.update("acme/bench", registry=str(reg))  # the user's choice stays
    assert lockfile.load(home / "ontoskills.lock").packages["acme/bench"].skills["opt-in"]
    other = tmp_path / "home2"
    Domain(other, registry=str(reg)).install("acme/bench/opt-in")
    skills = lockfile.load(other / "ontoskills.lock").packages["acme/bench"].skills
    assert skills == {"opt-in": True}


def test_one_install_reads_the_lockfile_once_under_the_home_lock(
    domain: Domain, registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mutation reads the lock once and passes it along (the journal's sha256, the parsed
    lock the verb edits, the signed-registry expectations, embeddings and reference indexes
    after the commit); only the home-overlap check before the home lock reads it again. It
    used to be read seven times per install."""
    import ontoskills.install.mutation as mutation
    import ontoskills.install.resolve as resolve

    domain.install("acme/devtools", registry=str(registry))  # a lock exists from here on
    reads: list[str] = []
    real = lockfile.read_lock_bytes

    def counting(path: Path) -> bytes | None:
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(lockfile, "read_lock_bytes", counting)
    monkeypatch.setattr(mutation, "read_lock_bytes", counting)
    monkeypatch.setattr(resolve, "load_lock", lambda p: lockfile.from_bytes(counting(p), p))
    domain.install("acme/design", registry=str(registry))
    assert len(reads) == 2, reads
    assert "acme/design" in domain.lock().packages
