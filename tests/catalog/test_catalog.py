"""The catalog over real installs (synthetic registries through the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.catalog.snapshot import FORMAT as snapshot_format
from ontoskills.errors import NotFoundError
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import installed_home, service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


def test_keys_are_package_qualified_and_disabled_skills_hidden(
    installed: Path, env: dict[str, str]
) -> None:
    svc = service(env)
    keys = {s.key for s in svc.skills()}
    assert keys == {
        "acme/devtools/debugging",
        "acme/devtools/planning",
        "acme/devtools/pdf",
        "acme/devtools/video-frames",
        "other/docs/pdf",  # same id in two packages: both served
    }
    assert "other/docs/hidden-gem" not in keys  # disabled in the lock
    assert svc.problems == []
    assert {s.key for s in svc.skills(min_trust="official")} == keys - {"other/docs/pdf"}


def test_three_names_resolve(installed: Path, env: dict[str, str]) -> None:
    svc = service(env)
    want = "acme/devtools/video-frames"
    for name in (
        want,
        "video-frames",  # manifest id
        "ffmpeg-keyframe-extraction",  # dcterms:identifier
        "https://ontoskills.sh/ontology#skill_acme_devtools_video_frames",  # IRI
        "oc:skill_acme_devtools_video_frames",
        "devtools/video-frames",
        "video_frames",
        "vidoe-frames",  # near miss
    ):
        assert svc.resolve(name) == want, name
    assert svc.resolve("pdf") == "acme/devtools/pdf"  # ambiguous id: the trusted package
    assert svc.resolve("other/docs/pdf") == "other/docs/pdf"
    assert svc.resolve("create a pdf") is None
    assert svc.resolve("bisect") is None  # sub-modules are not skills of their own


def test_submodule_and_turtle_aliases_belong_to_parent(
    installed: Path, env: dict[str, str]
) -> None:
    svc = service(env)
    for q in ("find the commit that introduced a regression", "git-bisect", "bug-hunt"):
        top = svc.search(q, mode="bm25").results[0]
        assert top.skill == "acme/devtools/debugging", q
    ctx = svc.context("acme/devtools/debugging")
    assert [m["path"] for m in ctx.modules] == ["debugging/bisect.ttl"]
    paths = ctx.to_json()
    assert paths["scripts"] and paths["scripts"][0].endswith("debugging/scripts/run.sh")


def test_disable_and_enable_are_picked_up(
    installed: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    svc = service(env)
    cli("disable", "acme/devtools/planning", check=True)
    assert svc.refresh() is True
    assert svc.resolve("acme/devtools/planning") is None
    with pytest.raises(NotFoundError):
        svc.context("acme/devtools/planning")
    cli("enable", "other/docs/hidden-gem", check=True)
    assert svc.refresh() is True
    assert svc.search("slow sql", mode="bm25").results[0].skill == "other/docs/hidden-gem"
    assert svc.refresh() is False  # nothing changed since


def _modify_keeping_size(path: Path) -> None:
    data = bytearray(path.read_bytes())
    i = data.index(b"Find the root")
    data[i : i + 4] = b"FIND"
    path.write_bytes(bytes(data))


def test_tampered_module_is_excluded_and_reported(installed: Path, env: dict[str, str]) -> None:
    module = (
        Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools/debugging/ontoskill.ttl"
    )
    _modify_keeping_size(module)
    svc = service(env, verify="full")
    assert svc.resolve("acme/devtools/debugging") is None
    assert any("debugging/ontoskill.ttl" in p and "sha256" in p for p in svc.problems)
    assert svc.resolve("acme/devtools/planning") == "acme/devtools/planning"


def test_fast_verify_rehashes_files_whose_stat_changed(
    installed: Path, env: dict[str, str]
) -> None:
    assert service(env, verify="fast").resolve("debugging")  # records the stat cache
    module = (
        Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme/devtools/debugging/ontoskill.ttl"
    )
    _modify_keeping_size(module)  # same size, new mtime: fast mode must still catch it
    svc = service(env, verify="fast")
    assert svc.resolve("acme/devtools/debugging") is None
    assert svc.problems


def test_missing_package_json_drops_the_package(installed: Path, env: dict[str, str]) -> None:
    (Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/other/docs/package.json").unlink()
    svc = service(env, verify="none")
    assert {s.package for s in svc.skills()} == {"acme/devtools"}
    assert any("other/docs" in p for p in svc.problems)


def test_local_skills(installed: Path, env: dict[str, str]) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    folder = home / "ontologies/my-skills/release-notes"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(
        "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
        'oc:skill_local_release_notes a oc:Skill ; dcterms:identifier "release-notes" ;\n'
        '  oc:resolvesIntent "draft release notes from merged pull requests" ;\n'
        '  oc:hasDescription "Write release notes" .\n'
    )
    (folder / "template.md").write_text("# notes\n")
    # Not local skills: anything under system/ or author/.
    (home / "ontologies/system/x").mkdir(parents=True)
    (home / "ontologies/system/x/ontoskill.ttl").write_text("")
    svc = service(env)
    top = svc.search("release notes from pull requests", mode="bm25").results[0]
    assert (top.skill, top.trust_tier) == ("local/my-skills/release-notes", "local")
    assert svc.context("release-notes").to_json()["assets"] == [str(folder / "template.md")]
    # Editing a local skill is picked up without a lock change.
    (folder / "ontoskill.ttl").write_text(
        (folder / "ontoskill.ttl").read_text().replace("Write release notes", "Write a changelog")
    )
    assert svc.refresh() is True
    assert svc.skills(min_trust="official")[-1].description in (
        "Write a changelog",
        svc.skills()[-1].description,
    )


def test_broken_local_turtle_is_reported_not_fatal(installed: Path, env: dict[str, str]) -> None:
    folder = Path(env["ONTOSKILLS_HOME"]) / "ontologies/mine/bad"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text("this is not turtle")
    svc = service(env)
    assert any("invalid Turtle" in p for p in svc.problems)
    assert len(svc.skills()) == 5


def test_snapshot_reused_then_invalidated_by_lock_change(
    installed: Path, cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    service(env)
    snaps = sorted((home / "state/derived/search-index").glob("index-*.json"))
    assert len(snaps) == 1
    # Break a module behind the lock's back; with verify=none a reused snapshot still serves
    # it, which proves start-up did not re-parse the Turtle.
    module = home / "ontologies/author/acme/devtools/planning/ontoskill.ttl"
    module.write_text("not turtle at all")
    svc = service(env, verify="none")
    assert svc.resolve("acme/devtools/planning") == "acme/devtools/planning"
    module.unlink()
    # A lock change (new package) misses the snapshot and rebuilds.
    reg = build_registry(
        tmp_path / "reg2",
        [
            PackageSpec(
                id="zed/tools", skills=[SkillSpec("zap", "Zap things", intents=("zap things",))]
            )
        ],
    )
    cli("--registry", str(reg), "install", "zed/tools", check=True)
    assert svc.refresh() is True
    assert svc.resolve("zap") == "zed/tools/zap"
    assert svc.resolve("acme/devtools/planning") is None  # rebuilt: the missing file shows
    new = sorted((home / "state/derived/search-index").glob("index-*.json"))
    assert len(new) == 1 and new != snaps  # old snapshots are cleaned up
    meta = json.loads(new[0].read_text())
    # 5 served + other/docs/hidden-gem, indexed but disabled (search names it, never serves it)
    assert meta["format"] == snapshot_format and len(meta["records"]) == 6 and meta["bm25_terms"]
    assert [r["key"] for r in meta["records"] if not r["enabled"]] == ["other/docs/hidden-gem"]


def test_broken_lock_while_serving_keeps_the_last_good_view(
    installed: Path, env: dict[str, str]
) -> None:
    lock = Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock"
    svc = service(env)
    good = lock.read_text()
    lock.write_text(good + "\n<<<<<<< HEAD\n")
    assert svc.refresh() is False
    assert svc.resolve("planning") == "acme/devtools/planning"
    assert any("merge-conflict" in p for p in svc.problems)
    lock.write_text(good.replace("[packages.other", "#\n[packages.other", 1))
    assert svc.refresh() is True  # a valid lock again (same content, new bytes)
    from ontoskills.errors import LockFormatError

    lock.write_text("<<<<<<< HEAD\n")
    with pytest.raises(LockFormatError):
        service(env)  # a fresh start has nothing to fall back on: exit 3


def test_damaged_derived_files_are_rebuilt(installed: Path, env: dict[str, str]) -> None:
    service(env)
    derived = Path(env["ONTOSKILLS_HOME"]) / "state/derived"
    for p in derived.rglob("*.json"):
        p.write_text("{not json")
    for p in derived.rglob("*.arrays"):
        p.write_bytes(b"garbage")
    svc = service(env)
    assert len(svc.skills()) == 5 and svc.problems == []
