"""Skill context sized for a model: parts, pages and overviews over real installs of synthetic
skills of every size (tests/helpers/rich_home.py), through `SkillService`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from ontoskills.catalog.disclosure import ContextAnswer, json_chars, paginate
from ontoskills.catalog.parts import slug
from ontoskills.config import load_config
from ontoskills.errors import NotFoundError
from ontoskills.paths import Home
from ontoskills.query import parse_part as parse_spec
from ontoskills.query import split_ref
from ontoskills.search.service import SkillService
from tests.helpers.context import walk
from tests.helpers.rich_home import BIG_PARAGRAPH, SKILLS, rich_home


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> SkillService:
    home = Home(rich_home(tmp_path_factory))
    return SkillService(home, home.default_lockfile, load_config(home.config_file))


def read_all(svc: SkillService, key: str, budget: int) -> Any:
    async def call(q: str) -> tuple[str, dict[str, Any], bool]:
        target = svc.resolve_context(q)
        assert target is not None, q
        try:
            a = svc.skill_answer(target[0], target[1], budget=budget)
        except NotFoundError as exc:
            return f"{exc.message}\nhint: {exc.hint}", {}, True
        return a.text, a.structured, False

    return anyio.run(walk, call, key, lambda text, data: len(text) + json_chars(data))


@pytest.mark.parametrize("budget", [2_000, 12_000, 40_000])
@pytest.mark.parametrize("name", sorted(SKILLS))
def test_budget_holds_and_every_piece_is_reachable(
    svc: SkillService, name: str, budget: int
) -> None:
    key = SKILLS[name]
    seen = read_all(svc, key, budget)
    assert max(seen.sizes) <= budget, (key, budget, max(seen.sizes))
    doc = svc.context(key).to_json()
    assert seen.missing(doc) == []
    # Pages are exact slices: each part read page by page is the part itself.
    parts = svc.disclosure(key, budget).parts.parts
    for pid, text in seen.parts.items():
        assert text == parts[pid].text, pid


def test_big_skills_get_an_overview_that_says_how_to_read_on(svc: SkillService) -> None:
    for name in ("pdf", "tree", "rules", "code", "paragraph"):
        key = SKILLS[name]
        a = svc.skill_answer(key)
        assert a.size <= 12_000
        assert a.structured["complete"] is False, key
        assert f'ontoskill(q="{key}#' in a.text
        assert "`#index`" in a.text
        ids = {p["id"] for p in a.structured["parts"]}
        assert ids and ids <= set(svc.disclosure(key).parts.parts)
        # No second copy of the text in structuredContent: ids, sizes, pages only.
        assert all(set(p) == {"id", "chars", "pages"} for p in a.structured["parts"])
    pdf = svc.skill_answer(SKILLS["pdf"])
    text = pdf.text
    assert text.index("[CRITICAL]") < text.index("[HIGH]") < text.index("## Parts")
    assert "`#workflow-fill-form` Fill a PDF form (9 steps): 1. Step 0" in text
    assert "qpdf" in text  # requirements
    para = svc.skill_answer(SKILLS["paragraph"])
    assert "(+" in para.text and "`#about`" in para.text  # 400 intents: the rest in #about
    assert BIG_PARAGRAPH[:100] not in para.text


def test_small_skill_comes_whole(svc: SkillService) -> None:
    a = svc.skill_answer(SKILLS["tiny"])
    assert a.structured["complete"] is True
    assert "Be small." in a.text and "whole skill" in a.text
    assert a.text.startswith(svc.context(SKILLS["tiny"]).render())


def test_part_ids_are_readable_stable_and_budget_independent(
    svc: SkillService, tmp_path_factory: pytest.TempPathFactory
) -> None:
    key = SKILLS["pdf"]
    ids = list(svc.disclosure(key, 12_000).parts.parts)
    assert ids[:4] == ["about", "knowledge", "workflow-fill-form", "workflow-merge"]
    for want in (
        "section-pdf-processing",
        "section-quick-reference",
        "section-reference",
        "section-topic-0-parsing",
        "section-topic-11-merging",
        "code",
        "code-1",
        "code-12",
        "index",
    ):
        assert want in ids, want
    assert list(svc.disclosure(key, 3_000).parts.parts) == ids
    home = Home(rich_home(tmp_path_factory))  # a fresh service parses the Turtle again
    fresh = SkillService(home, home.default_lockfile, load_config(home.config_file))
    assert list(fresh.disclosure(key, 12_000).parts.parts) == ids
    assert {p.id: p.text for p in fresh.disclosure(key).parts.parts.values()} == {
        p.id: p.text for p in svc.disclosure(key).parts.parts.values()
    }


def test_a_long_section_lists_its_subsections_instead_of_paging(svc: SkillService) -> None:
    made = svc.disclosure(SKILLS["pdf"], 12_000)
    reference = made.parts.parts["section-reference"]
    assert reference.children and len(reference.children) == 12
    assert "`#section-topic-3-merging`" in reference.text
    assert len(made.pages(reference)) == 1
    at_40k = svc.disclosure(SKILLS["pdf"], 40_000).parts.parts["section-reference"]
    assert not at_40k.children and "Topic 3 explained" in at_40k.text  # fits: inlined


def test_unknown_parts_and_pages_are_errors_naming_the_valid_ones(svc: SkillService) -> None:
    key = SKILLS["pdf"]
    with pytest.raises(NotFoundError) as info:
        svc.skill_answer(key, "knowledgee")
    assert "knowledgee" in info.value.message
    assert info.value.hint and "knowledge" in info.value.hint and f"{key}#index" in info.value.hint
    with pytest.raises(NotFoundError) as info:
        svc.skill_answer(key, "knowledge/99")
    assert "page" in info.value.message and f"{key}#knowledge" in (info.value.hint or "")
    with pytest.raises(NotFoundError) as info:
        svc.skill_answer(SKILLS["rules"], "knowledge/999")
    assert f"{SKILLS['rules']}#knowledge/1" in (info.value.hint or "")
    with pytest.raises(NotFoundError):
        svc.skill_answer(key, "knowledge/0")
    big = svc.disclosure(SKILLS["tree"], 2_000)
    with pytest.raises(NotFoundError) as info:
        svc.skill_answer(SKILLS["tree"], "no-such-part", budget=2_000)
    assert len(info.value.hint or "") < 1_500  # capped, not a list of hundreds of ids
    assert len(big.parts.parts) > 100


def test_lenient_part_names(svc: SkillService) -> None:
    key = SKILLS["pdf"]
    for spec, want in (
        ("#knowledge", "knowledge"),
        ("quick-reference", "section-quick-reference"),
        ("Quick Reference", "section-quick-reference"),
        ("fill-form", "workflow-fill-form"),
        ("3", "code-3"),
        ("code-3 @ 1", "code-3"),
        ("code-3:1", "code-3"),
    ):
        assert svc.skill_answer(key, spec).structured["part"] == want, spec


def test_resolve_context(svc: SkillService) -> None:
    assert svc.resolve_context("acme/docs/pdf") == ("acme/docs/pdf", None)
    assert svc.resolve_context("pdf#knowledge/2") == ("acme/docs/pdf", "knowledge/2")
    iri = "https://ontoskills.sh/ontology#skill_acme_docs_pdf"
    assert svc.resolve_context(iri) == ("acme/docs/pdf", None)
    assert svc.resolve_context(iri + "#about") == ("acme/docs/pdf", "about")
    assert svc.resolve_context("C# async patterns") is None  # a search, not a part
    assert svc.resolve_context("fill a pdf form") is None
    assert svc.resolve_context("nosuchskill#knowledge") is None


def test_show_part_is_whole(svc: SkillService) -> None:
    part = svc.part(SKILLS["rules"], "knowledge")
    assert part.chars > 100_000  # whole, not one page
    assert part.text.count("\n- ") == 5_000
    with pytest.raises(NotFoundError):
        svc.part(SKILLS["rules"], "nope")


def test_paginate_cuts_at_headings_lines_then_spaces_and_loses_nothing() -> None:
    text = "# A\n" + "line\n" * 30 + "# B\n" + "word " * 200 + "x" * 500
    pages = paginate(text, 100)
    assert "".join(pages) == text
    assert all(len(p) <= 100 for p in pages)
    assert any(p.startswith("# B") for p in pages)  # a heading starts a page when it can
    assert all(p.endswith(("\n", " ")) for p in pages[:-1] if "x" not in p)
    assert paginate("", 10) == [""]
    assert paginate("abc", 10) == ["abc"]


def test_parse_spec_and_split_ref() -> None:
    assert parse_spec("knowledge/2") == ("knowledge", 2)
    assert parse_spec("knowledge @ 3") == ("knowledge", 3)
    assert parse_spec("code-3") == ("code-3", None)
    assert parse_spec("section-1-2/10") == ("section-1-2", 10)
    assert parse_spec("x/1234567890") == ("x/1234567890", None)  # not a page number
    # A regex took ~40 s on this (quadratic backtracking over the spaces); now a scan.
    spaced = "a" + " " * 16_000 + "/"
    assert parse_spec(spaced) == (spaced.strip(), None)
    assert split_ref("a/b/c#x/2") == ("a/b/c", "x/2")
    assert split_ref("a/b/c") is None
    assert split_ref("tag it with #urgent") is None  # words before the #: a search
    assert split_ref("#knowledge") is None
    assert slug("1.2 Défer Await — Until Needed!") == "1-2-defer-await-until-needed"
    assert len(slug("word " * 40)) <= 40


def test_answer_size_counts_text_and_json() -> None:
    a = ContextAnswer("héllo", {"k": "ü"})
    assert a.size == 5 + len('{"k":"ü"}')


def test_context_budget_from_config(tmp_path: Path) -> None:
    from ontoskills.config import DEFAULT_CONTEXT_BUDGET, load_config
    from ontoskills.errors import ConfigError

    path = tmp_path / "config.toml"
    assert load_config(path).serve.context_budget == DEFAULT_CONTEXT_BUDGET
    path.write_text("[serve]\ncontext_budget = 5000\nother = 1\n")
    cfg = load_config(path)
    assert cfg.serve.context_budget == 5000
    cfg.serve.context_budget = 6000
    cfg.save()
    assert "other = 1" in path.read_text() and load_config(path).serve.context_budget == 6000
    for bad in ("10", "true", '"12000"', "2000000", "12000.5"):
        path.write_text(f"[serve]\ncontext_budget = {bad}\n")
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert "serve.context_budget" in info.value.message


@pytest.mark.parametrize("budget", [2_000, 12_000])
def test_a_full_chunk_fits_on_any_page_even_the_last(svc: SkillService, budget: int) -> None:
    """The page room is computed for the worst page: a middle page carries `next`, the last
    one a longer footer; a chunk filling the room must fit on either."""
    for key in (SKILLS["pdf"], SKILLS["code"]):
        made = svc.disclosure(key, budget)
        for part in made.parts.parts.values():
            room = budget - made._overhead(part.id, part.title, part.chars)  # what pages use
            assert max(map(len, made.pages(part))) <= room
            n = len(made.pages(part))
            for page in {1, n}:
                full = made._page(part.id, part.title, "x" * room, page, max(n, 2), part.chars)
                assert full.size <= budget, (key, part.id, page)


def test_the_minimal_overview_fits_the_smallest_budget(svc: SkillService) -> None:
    from ontoskills.config import MIN_CONTEXT_BUDGET

    made = svc.disclosure(SKILLS["paragraph"], MIN_CONTEXT_BUDGET)
    last_resort = made._minimal()
    assert last_resort.size <= MIN_CONTEXT_BUDGET
    assert f'"{SKILLS["paragraph"]}#index"' in last_resort.text
    assert made.overview().size <= MIN_CONTEXT_BUDGET
