"""Issue 24's "Also" list: what a new user trying the CLI tripped over. Each test runs the
real CLI entry (in-process: same parsing, contexts and renderers as the console script) over
a synthetic registry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, sample_packages
from tests.helpers.richskill import rich_package, sample_rich

LONG_ID = "skillsbench/citation-checker-with-a-name-too-long-for-one-terminal-row"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", sample_packages())


def long_registry(root: Path, version: str = "1.0.0") -> Path:
    skill = SkillSpec("checking-citations-in-a-long-paper", "Check citations")
    return build_registry(root, [PackageSpec(id=LONG_ID, skills=[skill], version=version)])


# 1. a table that is not going to a terminal is never cut -----------------------------------
def test_piped_list_and_outdated_keep_whole_ids(cli_inproc: CliRunner, tmp_path: Path) -> None:
    reg = long_registry(tmp_path / "reg")
    cli_inproc("--registry", str(reg), "install", LONG_ID, check=True)
    listed = cli_inproc("list", check=True)
    assert LONG_ID in listed.stdout and "…" not in listed.stdout
    long_registry(tmp_path / "reg", version="2.0.0")  # the registry moved on
    stale = cli_inproc("outdated", check=True)
    assert LONG_ID in stale.stdout and "…" not in stale.stdout
    assert "2.0.0" in stale.stdout


# 2. the first search that builds the index says so ------------------------------------------
def test_first_search_says_it_builds_the_index(
    cli_inproc: CliRunner, registry: Path, env: dict[str, str]
) -> None:
    cli_inproc("--registry", str(registry), "install", "acme/devtools", "acme/design", check=True)
    first = cli_inproc("search", "debugging", check=True)
    assert "building the search index for 4 skills" in first.stderr
    again = cli_inproc("show", "acme/devtools/debugging", check=True)
    assert "building" not in again.stderr  # read back from the snapshot: nothing to say
    shutil.rmtree(Path(env["ONTOSKILLS_HOME"]) / "state/derived/search-index")
    quiet = cli_inproc("search", "debugging", "--quiet", check=True)
    assert quiet.stderr == ""  # --quiet: nothing, though this run built it again
    shutil.rmtree(Path(env["ONTOSKILLS_HOME"]) / "state/derived/search-index")
    shown = cli_inproc("show", "acme/design/colorize", check=True)
    assert "building the search index for 4 skills" in shown.stderr


# 3. wording ---------------------------------------------------------------------------------
def test_ci_into_an_empty_home_installs(
    cli_inproc: CliRunner, registry: Path, env: dict[str, str], tmp_path: Path
) -> None:
    cli_inproc("--registry", str(registry), "install", "acme/devtools", check=True)
    lock = str(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
    fresh = cli_inproc("--home", str(tmp_path / "fresh"), "--lockfile", lock, "ci", check=True)
    assert "installed acme/devtools 1.2.0" in fresh.stderr
    assert "reinstalled" not in fresh.stderr
    doc = json.loads(
        cli_inproc("--home", str(tmp_path / "fresh"), "--lockfile", lock, "ci", "--json").stdout
    )
    assert [c["action"] for c in doc["changes"]] == ["reinstalled"]  # it was there this time


def test_toggling_a_skill_already_so_says_already(cli_inproc: CliRunner, registry: Path) -> None:
    cli_inproc("--registry", str(registry), "install", "acme/devtools", check=True)
    first = cli_inproc("disable", "acme/devtools/planning", check=True)
    assert "disabled acme/devtools: planning" in first.stderr
    again = cli_inproc("disable", "acme/devtools/planning", check=True)
    assert "planning already disabled" in again.stderr and "✓" not in again.stderr
    both = cli_inproc("enable", "acme/devtools", check=True)  # planning off, the others on
    assert "enabled acme/devtools: planning" in both.stderr
    assert "debugging, reviewing already enabled" in both.stderr


def test_a_skill_the_user_disabled_is_not_called_opt_in(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    def publish(version: str) -> Path:
        skills = [
            SkillSpec("main", "The main skill"),
            SkillSpec("extra", "An opt-in extra", default_enabled=False),
            SkillSpec("mine", "One the user turns off"),
        ]
        return build_registry(tmp_path / "reg", [PackageSpec("acme/kit", skills, version)])

    reg = publish("1.0.0")
    added = cli_inproc("--registry", str(reg), "install", "acme/kit", check=True)
    assert "1 of 3 skills installed but disabled (opt-in" in added.stderr
    assert ": extra" in added.stderr
    cli_inproc("disable", "acme/kit/mine", check=True)
    publish("1.1.0")
    updated = cli_inproc("update", check=True)
    assert "updated acme/kit 1.1.0" in updated.stderr
    assert "opt-in" not in updated.stderr  # neither is new: both are off by the lock now
    assert "2 of 3 skills disabled (not served" in updated.stderr
    assert "extra, mine" in updated.stderr


def test_one_skill_is_not_one_skills(cli_inproc: CliRunner, registry: Path) -> None:
    proc = cli_inproc("--registry", str(registry), "install", "acme/design", check=True)
    assert "2 files, 1 skill\n" in proc.stderr
    assert "1 skills" not in proc.stderr


# 4. show: the next page as a CLI command; an ambiguous name refused --------------------------
@pytest.fixture
def two_pdfs(cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]) -> CliRunner:
    """acme/docs/pdf (long: its knowledge comes in pages at a 2,000-char budget) and a second
    `pdf` in acme/more."""
    other = PackageSpec("acme/more", [SkillSpec("pdf", "Another PDF skill")])
    reg = build_registry(tmp_path / "reg", [rich_package(sample_rich()), other])
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[serve]\ncontext_budget = 2000\n")
    cli_inproc("--registry", str(reg), "install", "acme/docs", "acme/more", check=True)
    return cli_inproc


def test_show_page_tells_the_next_page_as_a_cli_command(two_pdfs: CliRunner) -> None:
    page = two_pdfs("show", "acme/docs/pdf#knowledge/1", check=True)
    assert page.stdout.rstrip().endswith("next page: ontoskills show 'acme/docs/pdf#knowledge/2'")
    assert "ontoskill(q=" not in page.stdout
    doc = json.loads(two_pdfs("show", "acme/docs/pdf#knowledge/1", "--json").stdout)
    assert doc["pages"] > 1 and 'ontoskill(q="acme/docs/pdf#knowledge/2")' in doc["text"]
    last = two_pdfs("show", f"acme/docs/pdf#knowledge/{doc['pages']}", check=True)
    assert last.stdout.rstrip().endswith(
        "end of #knowledge. Overview: ontoskills show acme/docs/pdf; "
        "every part: ontoskills show 'acme/docs/pdf#index'"
    )


def test_show_of_a_name_several_packages_ship_is_refused(two_pdfs: CliRunner) -> None:
    for q in ("pdf", "pdf#knowledge/1"):
        proc = two_pdfs("show", q)
        assert proc.returncode == 2 and proc.stdout == ""
        assert "is ambiguous: 2 installed skills" in proc.stderr
        assert "have that name: acme/docs/pdf, acme/more/pdf\n" in proc.stderr
        assert "hint: name one in full, e.g. `ontoskills show " in proc.stderr
    assert "Another PDF skill" in two_pdfs("show", "more/pdf", check=True).stdout
    assert two_pdfs("search", "pdf", check=True).returncode == 0  # a search still ranks both


# 5. verbs from other package managers, @version, error wording, outdated on an empty home ----
@pytest.mark.parametrize(
    ("typed", "ours"),
    [(("uninstall", "acme/devtools"), "remove"), (("ls",), "list"), (("rm", "x"), "remove")],
)
def test_other_package_managers_verbs_suggest_ours(
    cli_inproc: CliRunner, typed: tuple[str, ...], ours: str
) -> None:
    proc = cli_inproc(*typed)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: no such command '{typed[0]}'.\n"
        f"hint: did you mean `ontoskills {ours}`? (see `ontoskills --help`)\n"
    )


def test_usage_errors_start_lowercase_like_every_error(cli_inproc: CliRunner) -> None:
    for args in (("search",), ("install", "--bogus"), ("registry", "nope")):
        proc = cli_inproc(*args)
        assert proc.returncode == 2
        assert proc.stderr.startswith("error: ") and proc.stderr[7].islower(), proc.stderr


def test_install_at_version(cli_inproc: CliRunner, registry: Path, env: dict[str, str]) -> None:
    reg = ("--registry", str(registry))
    wrong = cli_inproc(*reg, "install", "acme/devtools@0.11.0")
    assert wrong.returncode == 7
    assert "acme/devtools@0.11.0 is not available: registry" in wrong.stderr
    assert "has acme/devtools 1.2.0" in wrong.stderr
    assert "hint: a registry serves one version of a package, its current one" in wrong.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()  # nothing written
    right = cli_inproc(*reg, "install", "acme/devtools@1.2.0", "acme/design/colorize@0.3.0")
    assert right.returncode == 0, right.stderr
    lock = (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").read_text()
    assert '"acme/devtools"' in lock and "@" not in lock  # the lock records specs, not pins
    bad = cli_inproc(*reg, "install", "acme/devtools@1.2.0;x")
    assert bad.returncode == 2 and "invalid version" in bad.stderr


def test_outdated_on_an_empty_home_is_not_an_error(cli_inproc: CliRunner) -> None:
    listed = cli_inproc("list", check=True)
    stale = cli_inproc("outdated")
    # `list` may name the tree it looked at first (a project); both say the same thing
    assert stale.returncode == 0 and listed.stderr.startswith("no packages installed")
    assert stale.stderr.endswith("no packages installed\n")
    assert json.loads(cli_inproc("outdated", "--json").stdout)["packages"] == []
