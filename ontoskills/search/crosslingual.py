"""Queries in other languages -> English words (issue 26): classic dictionary query translation.

The skills are written in English and the encoder (MiniLM) reads English only, so a query in
Spanish, German, French, Portuguese, Japanese or Chinese ranked by luck (loanwords). This stage
detects such a query cheaply and renders it in English with `data/glossary.tsv`; the normal
hybrid pipeline (BM25 and the encoder) then searches the rendering, so confidence, budgets and
answers are unchanged (the answer still echoes the user's own query).

- Detection: kana -> ja, CJK ideographs -> zh; Latin script: the language's function words
  ("para", "und", "les", "uma") outnumber English stop words, or, with neither, most words
  are unknown to the catalog's vocabulary and the glossary knows them ("generar factura").
  An English query is returned as it is, unchanged (the same object).
- Latin-script translation: the language's Snowball stemmer on both the glossary's forms and
  the query's words (inflections meet), longest multi-word form first; German compounds are
  split on glossary stems; a word no glossary knows may be a cognate (suffix rules:
  "validacion" -> "validation"), kept only when the catalog has the English stem; anything
  else is kept as it is (names such as "Suricata", "PDF" still match, and an untranslated
  word still counts as unknown evidence for confidence).
- ja / zh: longest-match segmentation over the glossary's forms (no spaces), embedded Latin
  tokens ("PDF", "Docker", "A/B") kept.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Container
from dataclasses import dataclass, field
from importlib import resources

import snowballstemmer

from ..query import QUERY_SCORED_CHARS
from .tokenize import STOP_WORDS, fold, stem

LANGS = ("es", "de", "fr", "pt", "ja", "zh")  # the glossary's columns after English
LATIN = ("es", "de", "fr", "pt")
_SNOWBALL = {"es": "spanish", "de": "german", "fr": "french", "pt": "portuguese"}
MAX_FORM_WORDS = 4  # a longer Latin form is refused by the reader (matching looks this far)
MAX_CJK_FORM = 12  # likewise in characters for ja / zh forms
# What is translated of a long query (the encoder reads 128 tokens; BM25 gains little from
# a pasted log's tail): bounds the work of hostile input, ~10 ms at worst.
MAX_WORDS = 160
MAX_CJK_CHARS = 600
_WORD_RE = re.compile(r"[^\W_]+")
_KANA_RE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#]*(?:[./-][A-Za-z0-9+#]+)*")

# Function words: frequent, never content, and (for detection) not English stop words too.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(ws.split()) - STOP_WORDS
    for lang, ws in {
        "es": """el la los las un una unos unas de del al y o en para por con sin que como
        mi mis tu su sus este esta estos estas ese esa esos es son se lo le les nos quiero
        necesito hacer cómo qué muy más todos todas entre sobre desde hasta antes pero""",
        "de": """der die das den dem des ein eine einen einem einer eines und oder im mit
        für von zu zum zur auf aus bei ich mein meine meinen meinem wie was ist sind bitte
        soll sollte will möchte nicht auch nach über unter gegen vor dass welche welcher
        welches mir mich uns ihr sie es alle""",
        "fr": """le la les un une des de du et ou en dans pour par avec sans que qui
        comment mon ma mes ce cette ces est sont je veux au aux sur son sa ses leur leurs
        avant après mes nos vos très""",
        "pt": """o os um uma uns umas de do da dos das e ou em no na nas para por com sem
        que como meu minha meus minhas este esta isso é são eu quero preciso ao aos pelo
        pela entre sobre antes depois muito""",
    }.items()
}


_ANY_FUNCTION = frozenset().union(*FUNCTION_WORDS.values())


@dataclass(frozen=True)
class Glossary:
    """Read from glossary.tsv by `parse` (the one reader)."""

    # lang -> (the form's words, English); stemmed per language on first use (`table`)
    latin: dict[str, list[tuple[tuple[str, ...], str]]] = field(default_factory=dict)
    cjk: dict[str, dict[str, str]] = field(default_factory=dict)  # lang -> form -> English
    size: int = 0  # English rows


_stem_lock = threading.Lock()  # Snowball stemmers keep the word being stemmed in fields


@functools.lru_cache(maxsize=8)
def _stemmer(lang: str) -> snowballstemmer.Stemmer:
    return snowballstemmer.stemmer(_SNOWBALL[lang])


@functools.lru_cache(maxsize=65536)
def fstem(lang: str, word: str) -> str:
    """A lower-cased foreign word -> its stem, accents folded after stemming (the stemmers
    read the accents: "creación" and "creacion" stem differently otherwise)."""
    with _stem_lock:
        stemmed = str(_stemmer(lang).stemWord(word))
    return fold(stemmed)


def _words(text: str) -> list[str]:
    return [
        w for w in _WORD_RE.findall(unicodedata.normalize("NFKC", text).lower()) if len(w) <= 64
    ]


def parse(text: str) -> tuple[Glossary, list[str]]:
    """The glossary and its malformed lines (a test asserts there are none; at run time a
    bad line is skipped, so an edit mistake never fails a user's search)."""
    latin: dict[str, list[tuple[tuple[str, ...], str]]] = {lang: [] for lang in LATIN}
    cjk: dict[str, dict[str, str]] = {"ja": {}, "zh": {}}
    problems: list[str] = []
    rows = 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        english = " ".join(_words(cols[0]))
        if len(cols) != 1 + len(LANGS) or not english:
            problems.append(f"line {n}: expected {1 + len(LANGS)} tab-separated columns")
            continue
        rows += 1
        for lang, cell in zip(LANGS, cols[1:], strict=True):
            for form in (f.strip() for f in cell.split("|")):
                if not form or form == "-":
                    continue
                if lang in cjk:
                    if len(form) > MAX_CJK_FORM:
                        problems.append(f"line {n}: {lang} form {form!r} is too long")
                    else:
                        cjk[lang].setdefault(unicodedata.normalize("NFKC", form).lower(), english)
                    continue
                ws = tuple(_words(form))
                if not ws or len(ws) > MAX_FORM_WORDS:
                    problems.append(f"line {n}: {lang} form {form!r} has no or too many words")
                    continue
                latin[lang].append((ws, english))
    return Glossary(latin, cjk, rows), problems


@functools.cache
def glossary() -> Glossary:
    text = resources.files(__package__).joinpath("data/glossary.tsv").read_text("utf-8")
    return parse(text)[0]


@functools.cache
def table(lang: str) -> dict[tuple[str, ...], str]:
    """One Latin-script language's forms by stems. Built on first use: pure-Python Snowball
    costs ~0.1 ms a word, so all four at once would add ~0.3 s to the first foreign query,
    and an English-only process never builds any."""
    out: dict[tuple[str, ...], str] = {}
    for ws, english in glossary().latin[lang]:
        out.setdefault(tuple(fstem(lang, w) for w in ws), english)  # the first row wins
    return out


def detect(text: str, vocabulary: Container[str]) -> str | None:
    """The query's language among LANGS, or None (English, or nothing to go on)."""
    if _KANA_RE.search(text):
        return "ja"
    if _CJK_RE.search(text):
        return "zh"
    ws = _words(text)
    if not ws:
        return None
    # Foreign content: words the catalog does not have (English words it mostly has) that
    # a glossary knows, or two function words and no English one; so "modal.com A100" (pt
    # "com") stays English.
    strangers = [w for w in ws if w not in _ANY_FUNCTION and stem(fold(w)) not in vocabulary]
    english = sum(w in STOP_WORDS for w in ws)
    foreign = len(_ANY_FUNCTION.intersection(ws))  # distinct: "la la land" is one
    if not strangers and (foreign < 2 or english):
        return None  # decided before any glossary is read
    known = {lang: sum((fstem(lang, w),) in table(lang) for w in strangers) for lang in LATIN}
    if not any(known.values()) and (foreign < 2 or english):
        return None
    if english > foreign:
        return None
    hits = {lang: sum(_share(w, lang) for w in ws) for lang in LATIN}
    best = max(LATIN, key=lambda lang: (hits[lang], known[lang]))
    if foreign > english:
        return best
    # A tie ("in ein Word-Dokument"), or no function words at all ("generar factura"):
    # foreign if most content words are function words or unknown to the catalog (whose
    # bodies hold the odd "de" or "ein", so a function word counts whatever the catalog has).
    content = [w for w in ws if w not in STOP_WORDS]
    strange = sum(w in _ANY_FUNCTION or stem(fold(w)) not in vocabulary for w in content)
    return best if 2 * strange >= len(content) else None


def _share(w: str, lang: str) -> float:
    """A function word's vote for `lang`, split among the languages that share it ("de")."""
    if w not in FUNCTION_WORDS[lang]:
        return 0.0
    return 1.0 / sum(w in FUNCTION_WORDS[other] for other in LATIN)


def english(text: str, vocabulary: Container[str]) -> str:
    """The English rendering searched in place of `text`; `text` itself when it reads as
    English. `vocabulary`: the catalog's stemmed terms (BM25's), for detection and cognates."""
    text = text[:QUERY_SCORED_CHARS]
    lang = detect(text, vocabulary)
    if lang is None:
        return text
    if lang in ("ja", "zh"):
        return " ".join(_cjk(text[:MAX_CJK_CHARS], lang)) or text
    return " ".join(_latin(_words(text)[:MAX_WORDS], lang, vocabulary)) or text


def _cjk(text: str, lang: str) -> list[str]:
    gloss = glossary()
    tables = [gloss.cjk[lang], gloss.cjk["zh" if lang == "ja" else "ja"]]
    out: list[str] = []
    norm = unicodedata.normalize("NFKC", text)
    i, n = 0, len(norm)
    while i < n:
        m = _LATIN_TOKEN_RE.match(norm, i)
        if m:
            out.append(m.group())
            i = m.end()
            continue
        for size in range(min(MAX_CJK_FORM, n - i), 0, -1):
            piece = norm[i : i + size].lower()
            found = next((t[piece] for t in tables if piece in t), None)
            if found is not None:
                out.append(found)
                i += size
                break
        else:
            i += 1  # a particle, punctuation or a word no glossary knows
    return out


def _latin(ws: list[str], lang: str, vocabulary: Container[str]) -> list[str]:
    order = [lang, *(other for other in LATIN if other != lang)]
    out: list[str] = []
    i = 0
    while i < len(ws):
        found = _match(ws, i, order)
        if found is not None:
            out.append(found[0])
            i += found[1]
            continue
        w = ws[i]
        i += 1
        if w in FUNCTION_WORDS[lang] or w in STOP_WORDS:
            continue
        out.extend(_unmatched(w, lang, vocabulary))
    return out


def _match(ws: list[str], i: int, order: list[str]) -> tuple[str, int] | None:
    """The longest glossary form starting at ws[i], the query's language first."""
    for size in range(min(MAX_FORM_WORDS, len(ws) - i), 0, -1):
        if size == 1 and ws[i] in FUNCTION_WORDS[order[0]]:
            return None  # "entre", "para": never a content word on their own
        for lang in order:
            key = tuple(fstem(lang, w) for w in ws[i : i + size])
            found = table(lang).get(key)
            if found is not None:
                return found, size
    return None


def _unmatched(w: str, lang: str, vocabulary: Container[str]) -> list[str]:
    """A word the glossary lacks: a German compound of glossary words, a cognate of a
    catalog word, else the word itself (a name, a loanword, or honest unknown evidence)."""
    if lang == "de" and len(w) >= 8:
        parts = _compound(w, table("de"))
        if parts:
            return parts
    cognate = _cognate(fold(w), vocabulary)
    return [cognate or w]


def _compound(w: str, table: dict[tuple[str, ...], str]) -> list[str] | None:
    """Kundenservice -> customer, support: head and tail both glossary words (a linking s
    or e between them allowed), the longest head first."""
    for cut in range(len(w) - 3, 3, -1):
        head = table.get((fstem("de", w[:cut]),))
        if head is None:
            continue
        for tail in (w[cut:], w[cut + 1 :] if w[cut] in "se" else ""):
            if len(tail) >= 3:
                found = table.get((fstem("de", tail),))
                if found is not None:
                    return [head, found]
    return None


# Cognate suffixes, foreign -> English, tried in order; folded spellings (no accents).
_COGNATES = tuple(
    tuple(pair.split(">"))
    for pair in """acion>ation icion>ition cion>tion acao>ation icao>ication cao>tion sao>sion
    idad>ity idade>ity itat>ity ite>ity izar>ize iser>ize isieren>ize ieren>e ismo>ism
    isme>ism ismus>ism ico>ic ica>ic ique>ic isch>ic ivo>ive iva>ive if>ive iv>ive mente>ly
    encia>ence ancia>ance enz>ence anz>ance ia>y ie>y""".split()  # noqa: SIM905
)


def _cognate(w: str, vocabulary: Container[str]) -> str | None:
    """An English word the catalog has that `w` is a regular cognate of, else None."""
    if len(w) < 5 or stem(w) in vocabulary:
        return None  # short words are too ambiguous; a catalog word needs no cognate
    for foreign, eng in _COGNATES:
        if w.endswith(foreign) and len(w) - len(foreign) >= 3:
            candidate = w[: len(w) - len(foreign)] + eng
            if stem(candidate) in vocabulary:
                return candidate
    return None
