from __future__ import annotations

import pytest

from ontoskills.search.tokenize import fold, tokenize, words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("writing-plans", ["write", "plan"]),
        ("object_counter", ["object", "counter"]),
        ("systematicDebugging", ["systemat", "debug"]),
        ("HTTPServer", ["http", "server"]),
        ("Typography Hierarchy!!\r\n", ["typographi", "hierarchi"]),
        ("obra/superpowers/writing-plans", ["obra", "superpow", "write", "plan"]),
        ("ｆｕｌｌ－ｗｉｄｔｈ", ["full", "width"]),  # NFKC
        ("café résumé", ["cafe", "resum"]),  # accents folded
        ("running runs ran", ["run", "run", "ran"]),  # stemming
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_stop_words_dropped_but_never_everything() -> None:
    assert tokenize("how do I write the tests") == ["write", "test"]
    assert tokenize("the") == ["the"]  # a query of stop words still searches for something


def test_punctuation_and_empty() -> None:
    assert words("--- ... !!!") == []
    assert tokenize("") == []
    assert words("a.b,c;d") == ["a", "b", "c", "d"]


def test_fold_keeps_non_latin_letters() -> None:
    assert fold("Ångström") == "Angstrom"
    assert words("日本語 テスト") == ["日本語", "テスト"]


def test_stemming_from_many_threads_gives_the_sequential_stems() -> None:
    """The server tokenizes in worker threads; the Snowball stemmer is stateful."""
    from concurrent.futures import ThreadPoolExecutor

    from ontoskills.search import tokenize as tok

    stems = ["connect", "generat", "organ", "relat", "happi", "run", "format", "nation"]
    suffixes = ["", "s", "ing", "ed", "ion", "ions", "ational", "ization", "fulness", "ively"]
    words = [f"{w}{s}{n}" for n in ("", "x", "xy", "xyz") for w in stems for s in suffixes]
    tok.stem.cache_clear()
    want = [tok.stem(w) for w in words]
    for _ in range(5):
        tok.stem.cache_clear()  # every call a miss: the stemmer itself runs in each thread
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(tok.stem, words * 4))
        assert got == want * 4
