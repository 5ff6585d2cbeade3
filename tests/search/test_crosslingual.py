"""Queries in other languages (issue 26): detection, dictionary translation, hostile input,
the shipped glossary, and the service searching the English rendering."""

from __future__ import annotations

import tracemalloc
import unicodedata
from pathlib import Path

import pytest

from ontoskills.search import crosslingual
from ontoskills.search.crosslingual import LANGS, LATIN, detect, english, glossary, parse
from ontoskills.search.tokenize import tokenize
from tests.helpers.skills import installed_home, service

# A catalog's vocabulary as BM25 stores it: stemmed English terms.
VOCAB = frozenset(
    tokenize(
        "create edit pdf documents debug failing tests find root cause of a bug invoice "
        "template normalization stabilize validation extract text keyframes video docker "
        "deploy serverless modal gpu compose spreadsheet review code write plan process"
    )
)

ENGLISH = [
    "create a pdf",
    "my tests are failing, find the root cause",
    "modal.com A100 serverless",  # pt "com" once: not enough
    "fix la la land",  # one distinct function word repeated
    "the process dies on start",  # German "die" is an English verb too
    "docker compose up in a container",
    "el",
    "PDF",
    "write an implementation plan for de-duplication",
]


@pytest.mark.parametrize("q", ENGLISH)
def test_english_comes_back_unchanged(q: str) -> None:
    assert detect(q, VOCAB) is None
    assert english(q, VOCAB) is q  # the very object: nothing re-rendered


@pytest.mark.parametrize(
    ("q", "lang"),
    [
        ("crear una factura en PDF", "es"),
        ("generar factura", "es"),  # no function word: unknown to the catalog, known here
        ("Markdown in ein Word-Dokument umwandeln", "de"),  # "in" vs "ein": a tie
        ("Rechnung erstellen", "de"),
        ("préparer les écritures comptables", "fr"),
        ("Déboguer les tests qui échouent", "fr"),
        ("depurar um erro no código", "pt"),
        ("PDFからテキストを抽出する", "ja"),
        ("ファンドの保有銘柄", "ja"),
        ("从扫描的PDF中提取文字", "zh"),
    ],
)
def test_each_language_is_detected(q: str, lang: str) -> None:
    assert detect(q, VOCAB) == lang


@pytest.mark.parametrize(
    ("q", "want"),
    [
        ("creando facturas en PDF", "create invoice pdf"),  # inflections via Snowball
        ("depurar pruebas", "debug test"),
        ("die Fehler finden", "error find"),
        ("Rechnungsvorlage erstellen", "invoice template create"),  # compound split
        ("modifier une feuille de calcul", "edit spreadsheet"),  # multi-word form
        ("migrar do Hibernate 5 para o 6", "migrate hibernate 5 6"),  # names kept
        ("PDFからテキストを抽出する", "PDF text extract"),  # kana particles dropped
        ("用Docker部署服务", "Docker deploy"),  # Latin token kept inside CJK
        ("把Word和Excel文档转换成Markdown", "Word Excel document convert Markdown"),
        ("设计一个A/B测试实验", "design A/B test experiment"),
    ],
)
def test_translation(q: str, want: str) -> None:
    assert english(q, VOCAB) == want


def test_cognates_only_when_the_catalog_has_the_english_word() -> None:
    # not in the glossary: suffix rules, checked against the catalog's vocabulary
    assert "normalization" not in {e for forms in glossary().latin.values() for _, e in forms}
    assert english("normalización de los datos", VOCAB) == "normalization data"
    assert english("Modelle stabilisieren", VOCAB) == "model stabilize"
    # the same word against a catalog without it stays as it is (honest unknown evidence)
    assert english("normalización de los datos", frozenset()) == "normalización data"


def test_the_shipped_glossary_loads_without_a_malformed_line() -> None:
    text = (Path(crosslingual.__file__).parent / "data" / "glossary.tsv").read_text("utf-8")
    gloss, problems = parse(text)
    assert problems == []  # an edit mistake fails here, never in a user's search
    assert gloss.size >= 350
    for lang in LATIN:
        assert len(gloss.latin[lang]) >= 350, lang
    for lang in ("ja", "zh"):
        assert len(gloss.cjk[lang]) >= 350, lang


def test_a_malformed_line_is_reported_and_skipped() -> None:
    cols = "\t".join(["create", "crear", "erstellen", "créer", "criar", "作成", "创建"])
    short = "invoice\tfactura\tRechnung"  # 3 columns, not 7
    long_form = "\t".join(["x", "a b c d e", "-", "-", "-", "-", "-"])  # 5 words: too many
    gloss, problems = parse(f"# comment\n\n{cols}\n{short}\n{long_form}\n")
    assert gloss.size == 2
    assert [p.split(":")[0] for p in problems] == ["line 4", "line 5"]
    assert gloss.latin["es"] == [(("crear",), "create")]  # the short line added nothing


def _every_category() -> str:
    seen: dict[str, str] = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        if cat not in seen and cat != "Cs":
            seen[cat] = chr(cp)
    return " ".join(seen.values())


@pytest.mark.parametrize(
    "q",
    [
        "crear " * 700_000,  # 4 MiB
        "x" * (4 << 20),
        "漢" * 10_000,
        "の" * 10_000,
        "作成" * 5_000 + "PDF",
        _every_category(),
        "\u202ecrear factura\u202c \u200bdatos\u200d \ufeffPDF",  # RTL override, zero-width
        "مرحبا بالعالم إنشاء ملف",  # Arabic: no glossary, stays as it is
        "\u0301\u0301\u0301",
        "\x00\x01\x1f",
    ],
)
def test_hostile_input_is_bounded(q: str) -> None:
    tracemalloc.start()
    out = english(q, VOCAB)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert isinstance(out, str)
    assert len(out) <= 20 * 2_000  # at most the scored prefix's words, each an English term
    assert peak < 16 << 20  # the 4 MiB input itself is not copied whole


def test_every_language_column_is_used() -> None:
    gloss = glossary()
    assert set(LANGS) == set(gloss.latin) | set(gloss.cjk)


# ---------------------------------------------------------------- through the service


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    return installed_home(tmp_path_factory, env)


SYNTHETIC_ENGLISH = [
    "my tests are failing, find the root cause",
    "create a pdf",
    "write an implementation plan",
    "extract keyframes from a video",
    "la la land",
    "pdf de",
]


def test_english_rankings_are_byte_identical_with_the_stage_on(
    installed: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = service(env)
    on = [svc.search(q, top_k=5).to_json() for q in SYNTHETIC_ENGLISH]
    monkeypatch.setattr(crosslingual, "english", lambda text, vocabulary: text)
    off = [svc.search(q, top_k=5).to_json() for q in SYNTHETIC_ENGLISH]
    assert on == off


@pytest.mark.parametrize(
    ("q", "want"),
    [
        ("depurar las pruebas que fallan", "acme/devtools/debugging"),
        ("einen Implementierungsplan schreiben", "acme/devtools/planning"),
        ("extraire les images clés d'une vidéo", "acme/devtools/video-frames"),
        ("テストをデバッグする", "acme/devtools/debugging"),
        ("写一个实施计划", "acme/devtools/planning"),
    ],
)
def test_a_foreign_query_finds_the_english_skill(
    installed: Path, env: dict[str, str], q: str, want: str
) -> None:
    resp = service(env).search(q, top_k=3, mode="bm25")
    assert resp.results and resp.results[0].skill == want
    assert resp.query == q  # the answer echoes the user's own words


def test_a_foreign_need_no_skill_serves_is_not_high(installed: Path, env: dict[str, str]) -> None:
    resp = service(env).search("receta de pastel de chocolate para mi cumpleaños", mode="bm25")
    assert resp.confidence != "high"
