"""BM25 at every catalog size (Lucene idf), and bounded work for absurd tokens."""

from __future__ import annotations

import random
import string
from pathlib import Path

import numpy as np
import pytest

from ontoskills.search import bm25
from ontoskills.search.bm25 import MAX_TYPO_LEN, BM25Index
from ontoskills.search.tokenize import MAX_WORD, tokenize, words
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skills import service


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


SKILLS = [
    SkillSpec(
        "agent-browser",
        "Automate a real browser: open pages, click, fill forms, take screenshots",
        intents=("automate a browser to fill a web form", "scrape a page that needs login"),
    ),
    SkillSpec(
        "ledger-reconciliation",
        "Reconcile the general ledger against bank statements",
        intents=("find why the cash balance is off", "match bank transactions"),
    ),
    SkillSpec(
        "lean4-proofs",
        "Write and repair Lean 4 proofs with mathlib",
        intents=("eliminate sorry from a lemma", "fix failed to synthesize instance"),
    ),
]
# For each skill: words of its id, of its description and of an intent.
QUERIES = {
    "agent-browser": ["agent browser", "take screenshots of pages", "fill a web form"],
    "ledger-reconciliation": ["ledger reconciliation", "bank statements", "cash balance is off"],
    "lean4-proofs": ["lean4 proofs", "repair proofs with mathlib", "eliminate sorry"],
}


def test_idf_is_positive_for_terms_in_every_document() -> None:
    # Okapi's idf is log((N - n + 0.5) / (n + 0.5)): <= 0 for n >= N / 2, so in a catalog of
    # one skill every term scored 0 and the skill was dropped.
    assert bm25.idf(1, 1) > 0
    assert bm25.idf(2, 2) > 0
    assert bm25.idf(3, 2) > bm25.idf(3, 3) > 0
    one = BM25Index([tokenize("automate a browser to fill a web form")])
    assert one.scores(tokenize("fill a form"))[0] > 0


@pytest.mark.parametrize("size", [1, 2, 3])
def test_catalogs_of_one_two_three_skills_find_each_skill(
    size: int, cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    reg = build_registry(tmp_path / "reg", [PackageSpec(id="tiny/pkg", skills=SKILLS[:size])])
    cli("--registry", str(reg), "install", "tiny/pkg", check=True)
    svc = service(env)
    for spec in SKILLS[:size]:
        for q in QUERIES[spec.id]:
            resp = svc.search(q, mode="bm25")
            assert resp.results, f"{q!r} found nothing in a {size}-skill catalog"
            assert resp.results[0].skill == f"tiny/pkg/{spec.id}", q
            assert resp.confidence == "high", q


def _random_word(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def test_absurd_tokens_are_ignored_on_both_sides() -> None:
    huge = _random_word(100_000, 1)  # distinct letters: its deletions would all differ
    assert words(f"fill {huge} form") == ["fill", "form"]
    assert all(len(w) <= MAX_WORD for w in words("x" * (MAX_WORD + 1) + " ok"))
    index = BM25Index([[*tokenize("fill the web form"), "a" * 40], tokenize("bank ledger")])
    # The deletion index holds only typo-eligible terms, each <= MAX_TYPO_LEN characters.
    assert index.expand(huge) == []
    assert index.expand("a" * 39) == []  # over MAX_TYPO_LEN: never typo-corrected
    typo = index._typo_index()
    assert typo and max(map(len, typo)) <= MAX_TYPO_LEN
    assert all(len(t) <= MAX_TYPO_LEN for terms in typo.values() for t in terms)
    assert int(np.argmax(index.scores(tokenize("ledgr")))) == 1  # typos still work


def test_huge_word_in_a_skill_and_a_query(
    cli: CliRunner, env: dict[str, str], tmp_path: Path
) -> None:
    huge = _random_word(100_000, 2)
    skill = SkillSpec(
        "forms", f"Fill web forms {huge}", intents=(f"fill a form {_random_word(5_000, 3)}",)
    )
    reg = build_registry(tmp_path / "reg", [PackageSpec(id="big/words", skills=[skill])])
    cli("--registry", str(reg), "install", "big/words", check=True)
    svc = service(env)
    index = svc.state.ranker.bm25
    assert max(map(len, index.terms)) <= MAX_WORD
    resp = svc.search(f"fill {_random_word(1_990, 4)} form", mode="bm25")
    assert [r.skill for r in resp.results] == ["big/words/forms"]
    out = cli("search", f"{_random_word(1_500, 5)} forms", "--json", check=True)
    assert '"big/words/forms"' in out.stdout
