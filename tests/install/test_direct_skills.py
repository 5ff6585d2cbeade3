"""Direct installs of Agent Skills repositories (issue 25 item 2): `github:owner/repo[/skill]
[#ref]` against a loopback git server (ONTOSKILLS_GITHUB_URL), an https-style URL, a local
path; capped at community; the lock pins the commit, ci restores byte-identical, update
follows a new commit."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ontoskills.errors import UsageError
from ontoskills.registries import RegistryKind
from tests.helpers.domain import Domain
from tests.helpers.githttp import push_to
from tests.helpers.registry import commit_all
from tests.helpers.skillrepo import BASIC, github_served, skill_md, write_repo

PID = "acme/skills"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, str]]:
    yield from github_served(tmp_path, monkeypatch)


def test_github_spec_installs_pins_and_restores(
    served: tuple[Path, Path, str], domain: Domain, tmp_path: Path
) -> None:
    work, bare, base = served
    domain.install("github:acme/skills")
    lock = domain.lock()
    pkg = lock.packages[PID]
    reg = lock.registries[pkg.registry]
    assert reg.kind == RegistryKind.SKILLS and reg.url == f"{base}/acme/skills"
    assert pkg.trust_tier == "community" and pkg.requested == [PID]
    assert pkg.commit is not None and pkg.version == f"0.0.0+g{pkg.commit[:12]}"

    other = Domain(home=tmp_path / "home2", lockfile=domain.lock_path, cache=tmp_path / "c2")
    other.ci()
    for f in pkg.files:
        data = (other.package_dir(PID) / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256

    write_repo(work, {"skills/git-helper/SKILL.md": skill_md("git-helper", "Bisect faster.")})
    second = commit_all(work)
    push_to(work, bare)
    domain.update(PID)
    assert domain.lock().packages[PID].commit == second
    text = (domain.package_dir(PID) / "skills/git-helper/SKILL.md").read_text()
    assert "Bisect faster." in text


def test_github_spec_with_one_skill_and_a_ref(
    served: tuple[Path, Path, str], domain: Domain
) -> None:
    domain.install("github:acme/skills/pdf-tools#main")
    pkg = domain.lock().packages[PID]
    assert set(pkg.skills) == {"pdf-tools"} and pkg.requested == [f"{PID}/pdf-tools"]
    assert domain.lock().registries[pkg.registry].url.endswith("/acme/skills#main")
    assert not (domain.package_dir(PID) / "skills/git-helper").exists()


def test_a_local_path_is_a_direct_install(domain: Domain, tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "acme" / "skills", dict(BASIC))
    domain.install(str(repo))
    pkg = domain.lock().packages[PID]
    assert pkg.trust_tier == "community" and pkg.version.startswith("0.0.0+h")
    assert set(pkg.skills) == {"git-helper", "pdf-tools"}


@pytest.mark.parametrize(
    "spec",
    ["github:acme", "github:acme/skills/a/b", "github:../x", "github:a/b#..bad ref"],
)
def test_bad_direct_specs_are_usage_errors(domain: Domain, spec: str) -> None:
    with pytest.raises(UsageError) as info:
        domain.install(spec)
    assert info.value.exit_code == 2 and info.value.hint


def test_a_folder_without_skill_md_is_refused_by_name(domain: Domain, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"holds no SKILL\.md"):
        domain.install(str(tmp_path / "empty"))


def test_a_url_is_a_direct_install_too(served: tuple[Path, Path, str], domain: Domain) -> None:
    _, _, base = served
    domain.install(f"{base}/acme/skills")
    pkg = domain.lock().packages[PID]
    assert domain.lock().registries[pkg.registry].url == f"{base}/acme/skills"
    assert set(pkg.skills) == {"git-helper", "pdf-tools"}


def test_a_github_url_setting_that_is_not_http_is_exit_2(
    domain: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONTOSKILLS_GITHUB_URL", "file:///etc")
    with pytest.raises(UsageError, match="ONTOSKILLS_GITHUB_URL must be an http") as info:
        domain.install("github:acme/skills")
    assert info.value.exit_code == 2
