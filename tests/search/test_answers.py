"""What a search answer says: confidence, disabled skills (named, never served), copies
collapsed into `also_in` with every copy still resolvable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.errors import NotFoundError
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import installed_home, service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


NEGATIVES = [
    "what can I use instead of buttermilk in pancakes?",
    "configure VLANs and trunk ports on a Cisco Catalyst switch",
    "my dog pulls on the leash on every walk, how do I train him to stop",
]


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


# ---------------------------------------------------------------- confidence


def test_empty_home_says_nothing_is_installed(cli: CliRunner, env: dict[str, str]) -> None:
    resp = service(env).search("fill a pdf form")
    assert (resp.confidence, resp.results, resp.installed) == ("none", [], 0)
    doc = json.loads(cli("search", "fill a pdf form", "--json", check=True).stdout)
    assert doc["confidence"] == "none" and doc["installed_skills"] == 0
    text = cli("search", "fill a pdf form", check=True).stdout
    assert "No skills are installed" in text and "ontoskills install author/pkg" in text


def test_clear_positive_is_high_and_unrelated_query_is_not(
    installed: Path, env: dict[str, str]
) -> None:
    svc = service(env)
    assert svc.search("find the root cause of failing tests").confidence == "high"
    assert svc.search("acme/devtools/planning").confidence == "high"  # names a skill
    for q in NEGATIVES:
        resp = svc.search(q)
        assert resp.confidence in ("low", "none"), (q, resp.results[:1])
    # Words nobody installed: nothing matches at all.
    assert svc.search("buttermilk pancakes").confidence == "none"
    # One ordinary word matches, the rest of the request is about something else.
    low = svc.search("plan a wedding in kyoto")
    assert low.results and low.confidence == "low"


# ---------------------------------------------------------------- disabled skills


def test_disabled_best_match_is_named_not_served(
    installed: Path, env: dict[str, str], cli: CliRunner
) -> None:
    svc = service(env)
    resp = svc.search("speed up slow sql queries")
    assert "other/docs/hidden-gem" not in [r.skill for r in resp.results]
    assert [d.skill for d in resp.disabled] == ["other/docs/hidden-gem"]
    assert resp.disabled[0].enable == "ontoskills enable other/docs/hidden-gem"
    assert svc.resolve("hidden-gem") is None  # never served
    with pytest.raises(NotFoundError) as err:
        svc.context("other/docs/hidden-gem")
    assert "installed but disabled" in err.value.message
    assert "ontoskills enable other/docs/hidden-gem" in (err.value.hint or "")
    doc = json.loads(cli("search", "speed up slow sql queries", "--json", check=True).stdout)
    assert doc["disabled"][0]["enable"] == "ontoskills enable other/docs/hidden-gem"
    assert all(r["skill"] != "other/docs/hidden-gem" for r in doc["results"])
    shown = cli("show", "other/docs/hidden-gem")
    assert shown.returncode == 7 and shown.stdout == ""
    assert "installed but disabled" in shown.stderr
    assert "ontoskills enable other/docs/hidden-gem" in shown.stderr
    named = svc.search("hidden-gem")  # the query names the disabled skill
    assert named.disabled_lookup == "other/docs/hidden-gem"
    assert named.disabled[0].skill == "other/docs/hidden-gem"
    assert "is installed but disabled" in named.render()
    # A part of a disabled skill: the same answer, not a search for the words.
    part = svc.search("hidden-gem#knowledge")
    assert part.disabled_lookup == "other/docs/hidden-gem"
    with pytest.raises(NotFoundError) as err:
        svc.context("other/docs/hidden-gem#knowledge")
    assert "installed but disabled" in err.value.message
    shown = cli("show", "hidden-gem#knowledge")
    assert shown.returncode == 7 and "ontoskills enable other/docs/hidden-gem" in shown.stderr
    # A weak disabled match is not worth a line next to a strong enabled one.
    assert svc.search("write an implementation plan").disabled == []
    cli("enable", "other/docs/hidden-gem", check=True)
    again = service(env).search("speed up slow sql queries")
    assert again.results[0].skill == "other/docs/hidden-gem" and again.disabled == []


# ---------------------------------------------------------------- copies


def _copies(hash_: str = "c0ffee") -> list[PackageSpec]:
    def pdf() -> SkillSpec:
        return SkillSpec(
            "pdf",
            "Create, merge and split PDF documents",
            intents=("make a pdf report", "merge pdf files"),
            content_hash=hash_,
        )

    other = SkillSpec("slides", "Build slide decks", intents=("make slides",))
    return [
        PackageSpec(id="zz/official-kit", trust_tier="official", skills=[pdf(), other]),
        PackageSpec(id="bb/second", trust_tier="official", skills=[pdf()]),
        PackageSpec(id="aa/community", trust_tier="community", skills=[pdf()]),
        PackageSpec(id="cc/verified", trust_tier="verified", skills=[pdf()]),
        PackageSpec(
            id="dd/optin",
            trust_tier="official",
            skills=[
                SkillSpec(
                    "pdf",
                    "Create, merge and split PDF documents",
                    intents=("make a pdf report",),
                    content_hash=hash_,
                    default_enabled=False,
                )
            ],
        ),
    ]


def test_copies_collapse_most_trusted_first_and_stay_resolvable(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    reg = build_registry(tmp_path / "reg", _copies())
    ids = ["zz/official-kit", "bb/second", "aa/community", "cc/verified", "dd/optin"]
    # configured, not ad-hoc (an ad-hoc --registry is capped at community): tiers matter here
    cli("registry", "add", "copies", str(reg), check=True)
    cli("--registry", "copies", "install", *ids, check=True)
    assert [s.trust_tier for s in service(env).skills() if s.key.endswith("/pdf")] == [
        "community",
        "official",
        "verified",
        "official",
    ]
    svc = service(env)
    for mode in ("bm25",):
        results = svc.search("make a pdf report", mode=mode, top_k=5).results
        pdfs = [r for r in results if r.skill.endswith("/pdf")]
        assert len(pdfs) == 1  # four enabled copies, one result
        # Most trusted first, then by key; the disabled copy is not offered.
        assert pdfs[0].skill == "bb/second/pdf"
        assert pdfs[0].also_in == ["zz/official-kit/pdf", "cc/verified/pdf", "aa/community/pdf"]
        assert "zz/official-kit/slides" in [r.skill for r in results]  # not swallowed
    for key in ("bb/second/pdf", "zz/official-kit/pdf", "cc/verified/pdf", "aa/community/pdf"):
        assert svc.context(key).to_json()["skill"] == key
        assert svc.resolve(key) == key
        shown = json.loads(cli("show", key, "--json", check=True).stdout)
        assert shown["skill"] == key
    # Naming one copy puts that copy first, the others in its also_in.
    named = svc.search("aa/community/pdf").results[0]
    assert named.skill == "aa/community/pdf"
    assert named.also_in == ["bb/second/pdf", "zz/official-kit/pdf", "cc/verified/pdf"]
    assert svc.search("make a pdf report", min_trust="verified").results[0].also_in == [
        "zz/official-kit/pdf",
        "cc/verified/pdf",
    ]


def test_skills_without_a_content_hash_never_collapse(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    reg = build_registry(tmp_path / "reg", _copies(hash_=""))
    cli("--registry", str(reg), "install", "zz/official-kit", "bb/second", check=True)
    results = service(env).search("make a pdf report", mode="bm25").results
    assert sorted(r.skill for r in results if r.skill.endswith("/pdf")) == [
        "bb/second/pdf",
        "zz/official-kit/pdf",
    ]
    assert all(r.also_in == [] for r in results)
