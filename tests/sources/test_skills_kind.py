"""Registry kind `skills` (issue 25 item 1): an Agent Skills repository, a folder or a git
repository of SKILL.md folders, installed as one package; the lock round trip (ci, update)
and the compile's determinism. Synthetic repositories (tests/helpers/skillrepo.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from ontoskills.config import load_config
from ontoskills.errors import UsageError
from ontoskills.manifest import parse_manifest
from ontoskills.paths import Cache, Home
from ontoskills.registries import RegistryConfig, RegistryKind, detect_kind, skills_package_id
from ontoskills.skillheader import read_skill_header
from ontoskills.skillmd import parse_skill_md, skill_turtle
from ontoskills.sources import SourceOptions, open_source
from tests.conftest import CliRunner
from tests.helpers.domain import Domain
from tests.helpers.registry import commit_all
from tests.helpers.skillrepo import BASIC, skill_md, write_repo

PID = "acme/skills"


def _repo(tmp_path: Path, *, git: bool = False) -> Path:
    return write_repo(tmp_path / "src" / "acme" / "skills", dict(BASIC), git=git)


def _source(path: Path, tmp_path: Path, **kw: str):  # type: ignore[no-untyped-def]
    reg = RegistryConfig("s", str(path), RegistryKind.SKILLS, **kw)  # type: ignore[arg-type]
    return open_source(reg, SourceOptions(Cache(tmp_path / "cache")))


def test_detected_when_skill_md_files_and_no_index(tmp_path: Path) -> None:
    folder = _repo(tmp_path)
    assert detect_kind(str(folder)) == RegistryKind.SKILLS
    commit_all(folder)
    assert detect_kind(str(folder)) == RegistryKind.SKILLS  # a git work tree too
    (folder / "index.json").write_text('{"packages": []}')
    assert detect_kind(str(folder)) == RegistryKind.GIT  # an index.json: a registry
    plain = tmp_path / "plain"
    plain.mkdir()
    assert detect_kind(str(plain)) == RegistryKind.FOLDER


@pytest.mark.parametrize(
    ("url", "pid"),
    [
        ("https://github.com/Anthropics/skills", "anthropics/skills"),
        ("https://git.example.org/obra/superpowers.git#v1", "obra/superpowers"),
        ("git+ssh://git@host/team/agent-skills.git", "team/agent-skills"),
        ("git@github.com:vercel-labs/agent-skills.git", "vercel-labs/agent-skills"),
        ("/home/me/src/acme/skills", "acme/skills"),
        ("/skills", None),
        ("https://host/a b/ok", None),
    ],
)
def test_package_id_from_the_location(url: str, pid: str | None) -> None:
    assert skills_package_id(url) == pid


def test_the_repository_reads_as_a_one_package_registry(tmp_path: Path) -> None:
    src = _source(_repo(tmp_path), tmp_path)
    snap = src.load_index()
    (entry,) = snap.index.entries
    assert entry.package_id == PID and entry.trust_tier == "community"
    manifest = parse_manifest(src.read(entry.manifest_path, max_bytes=10**6), source="m")
    assert [s.id for s in manifest.skills] == ["git-helper", "pdf-tools"]  # template/ is not
    assert manifest.version.startswith("0.0.0+h")
    listed = {f.path for f in src.list_package(entry.package_root)}
    assert listed == {
        "skills/pdf-tools/SKILL.md",
        "skills/pdf-tools/scripts/fill.py",
        "skills/pdf-tools/FORMS.md",
        "skills/pdf-tools/ontoskill.ttl",
        "skills/git-helper/SKILL.md",
        "skills/git-helper/ontoskill.ttl",
    }  # README.md and template/ are outside every skill
    raw = src.read(f"{entry.package_root}/skills/pdf-tools/SKILL.md", max_bytes=10**6)
    assert raw == BASIC["skills/pdf-tools/SKILL.md"].encode()  # the authors' bytes


def test_a_location_without_a_package_id_is_refused_with_the_next_step(tmp_path: Path) -> None:
    folder = write_repo(tmp_path / "x", dict(BASIC))
    src = _source(folder, tmp_path)
    assert src.load_index().index.entries[0].package_id == f"{tmp_path.name}/x".lower()
    reg = RegistryConfig("s", "/skills", RegistryKind.SKILLS)
    with pytest.raises(UsageError, match="no package id") as info:
        type(src)(reg, SourceOptions(Cache(tmp_path / "c"))).load_index()
    assert "--kind skills --package-id AUTHOR/PKG" in (info.value.hint or "")


def test_the_compile_is_deterministic_and_carries_intents_rules_and_code() -> None:
    text = BASIC["skills/pdf-tools/SKILL.md"]
    a = skill_turtle(PID, parse_skill_md(text, "SKILL.md", skill_id="pdf-tools"))
    b = skill_turtle(PID, parse_skill_md(text, "SKILL.md", skill_id="pdf-tools"))
    assert a == b
    head = read_skill_header(a, "m", lenient=False)
    assert head.identifier == "pdf-tools"
    assert "the user asks to fill a PDF form" in head.intents
    assert "Fill and merge PDF forms" in head.intents
    ttl = a.decode()
    assert "oc:severityLevel" in ttl and "Never flatten a form" in ttl
    assert "oc:CodeExample" in ttl and 'oc:codeLanguage "bash"' in ttl


def test_install_from_a_folder_records_every_file_and_serves_the_authors_bytes(
    domain: Domain, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    domain.install(PID, registry=str(repo))
    lock = domain.lock()
    pkg = lock.packages[PID]
    assert lock.registries[pkg.registry].kind == RegistryKind.SKILLS
    assert set(pkg.skills) == {"git-helper", "pdf-tools"} and pkg.trust_tier == "community"
    root = domain.package_dir(PID)
    for f in pkg.files:  # generated files included, each with its sha256
        assert hashlib.sha256((root / f.path).read_bytes()).hexdigest() == f.sha256
    assert (root / "skills/pdf-tools/SKILL.md").read_bytes() == (
        repo / "skills/pdf-tools/SKILL.md"
    ).read_bytes()
    assert pkg.file("skills/pdf-tools/scripts/fill.py").executable  # type: ignore[union-attr]
    assert pkg.file("skills/pdf-tools/ontoskill.ttl") is not None


def test_git_lock_round_trip_ci_and_update_after_a_new_commit(
    domain: Domain, tmp_path: Path
) -> None:
    repo = _repo(tmp_path, git=True)
    first = commit_all(repo)
    domain.install(PID, registry=str(repo))
    pkg = domain.lock().packages[PID]
    assert pkg.commit == first and pkg.version == f"0.0.0+g{first[:12]}"
    files = {f.path: f.sha256 for f in pkg.files}

    # ci in a second home from the same lock: byte-identical
    other = Domain(home=tmp_path / "home2", lockfile=domain.lock_path)
    other.ci()
    root1, root2 = domain.package_dir(PID), other.package_dir(PID)
    for path, sha in files.items():
        assert hashlib.sha256((root2 / path).read_bytes()).hexdigest() == sha
        assert (root1 / path).read_bytes() == (root2 / path).read_bytes()

    # a new commit: update picks it up (new skill, new version and commit)
    write_repo(repo, {"skills/new-one/SKILL.md": skill_md("new-one", "A new skill.")})
    second = commit_all(repo)
    domain.update(PID)
    pkg = domain.lock().packages[PID]
    assert pkg.commit == second and "new-one" in pkg.skills
    assert (domain.package_dir(PID) / "skills/new-one/SKILL.md").is_file()


def test_registry_add_package_id_and_one_skill(domain: Domain, tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "checkout", dict(BASIC))
    home = Home.resolve(str(domain.home_path))
    home.root.mkdir(parents=True, exist_ok=True)
    config = load_config(home.config_file)
    config.registries = [
        RegistryConfig("mine", str(repo), detect_kind(str(repo)), package_id="team/tools")
    ]
    config.save()
    assert load_config(home.config_file).registries[0].package_id == "team/tools"
    domain.install("team/tools/pdf-tools")
    pkg = domain.lock().packages["team/tools"]
    assert set(pkg.skills) == {"pdf-tools"}
    assert all(not f.path.startswith("skills/git-helper/") for f in pkg.files)
    domain.ci()  # the configured package id survives the lock round trip
    assert (domain.package_dir("team/tools") / "skills/pdf-tools/ontoskill.ttl").is_file()


def test_a_folder_edited_after_the_lock_is_an_integrity_error_on_ci(
    domain: Domain, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    domain.install(PID, registry=str(repo))
    (repo / "skills/pdf-tools/FORMS.md").write_text("changed\n")
    from ontoskills.errors import IntegrityError

    # read from the repository again: the verified store would satisfy the locked hash
    shutil.rmtree(os.environ["ONTOSKILLS_CACHE_DIR"])

    with pytest.raises(IntegrityError, match="changed upstream since it was locked"):
        domain.ci()


def test_registry_add_kind_skills_through_the_cli(
    cli_inproc: CliRunner, domain: Domain, tmp_path: Path
) -> None:
    repo = write_repo(tmp_path / "checkout", dict(BASIC))
    added = cli_inproc(
        "registry", "add", "mine", str(repo), "--kind", "skills", "--package-id", "team/tools",
        "--json", check=True,
    )
    reg = json.loads(added.stdout)["registry"]
    assert reg["kind"] == "skills" and reg["package_id"] == "team/tools"
    cli_inproc("install", "team/tools/pdf-tools", check=True)
    assert set(domain.lock().packages["team/tools"].skills) == {"pdf-tools"}
    bad = cli_inproc("registry", "add", "bad", str(repo), "--package-id", "Not/Valid")
    assert bad.returncode == 2 and "package id" in bad.stderr


def test_outdated_doctor_toggle_and_remove_work_unchanged(
    domain: Domain, tmp_path: Path
) -> None:
    from ontoskills.install.queries import outdated

    repo = _repo(tmp_path, git=True)
    domain.install(PID, registry=str(repo))
    (row,) = outdated(domain.session()).packages
    assert row.status == "current"
    write_repo(repo, {"skills/git-helper/SKILL.md": skill_md("git-helper", "Changed.")}, git=True)
    (row,) = outdated(domain.session()).packages
    assert row.status == "outdated" and row.latest_version != row.version
    report = domain.doctor()
    assert not report.drifted and report.problems == []
    domain.disable(f"{PID}/git-helper")
    assert domain.lock().packages[PID].skills == {"git-helper": False, "pdf-tools": True}
    domain.enable(PID)
    (domain.package_dir(PID) / "skills/pdf-tools/FORMS.md").write_text("edited\n")
    assert domain.doctor().drifted
    domain.remove(PID)
    assert PID not in domain.lock().packages and not domain.package_dir(PID).exists()


def test_a_negated_use_clause_is_not_an_intent() -> None:
    from ontoskills.skillmd import description_intents

    got = description_intents(
        "Edit Word files. Use when a .docx is involved. Do NOT use for PDFs or spreadsheets. "
        "Don't use when the deliverable is HTML."
    )
    assert got == ("Edit Word files", "a .docx is involved")


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Never flatten a form.", ("AntiPattern", "HIGH")),
        ("DON'T add more fixes on top", ("AntiPattern", "CRITICAL")),
        ("You MUST complete each phase.", ("Constraint", "CRITICAL")),
        ("Always keep the original.", ("Constraint", "MEDIUM")),
        ("Read the forms guide first.", None),
    ],
)
def test_rules_and_their_severity(text: str, rule: tuple[str, str] | None) -> None:
    from ontoskills.skillmd import rule_of

    assert rule_of(text) == rule
