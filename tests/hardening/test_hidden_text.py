"""Issue 13 class 4: hidden text detection covers every invisible character.

The set comes from Unicode properties (every Cf character + the Default_Ignorable_Code_Point
ranges + line/paragraph separators), checked here against all 0x110000 code points.
Legitimate uses in context are not flagged: emoji ZWJ sequences, VS15/VS16 after an emoji,
keycaps, the three RGI subdivision flags, an ideographic variation selector after a CJK
ideograph, ZWNJ/ZWJ inside Arabic-script and Indic words, a BOM opening a file. Through the
real CLI: a warning on install, exit 4 with --strict, in Turtle literals (raw, \\u and \\U
escaped), IRIs, intents (manifest and intents.json) and manifest descriptions.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest

from ontoskills.safety import find_hidden_unicode, hidden_ranges, strip_hidden_unicode
from tests.conftest import CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case
from tests.helpers.hostile import (
    EVIL,
    EVIL_ROOT,
    OC,
    Case,
    build_hostile,
    edit_manifest,
    hidden_turtle,
    set_field,
    set_skill_field,
    write_raw,
)

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1) minus Cf, as ranges:
# what `unicodedata` cannot tell us, listed here independently of safety.py.
DEFAULT_IGNORABLE_NOT_CF = [
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D), (0x180F, 0x180F),
    (0x2065, 0x2065), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0000), (0xE0002, 0xE001F), (0xE0080, 0xE00FF), (0xE0100, 0xE01EF),
    (0xE01F0, 0xE0FFF),
]  # fmt: skip


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _flagged(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in hidden_ranges())


def test_every_format_and_default_ignorable_code_point_is_in_the_set() -> None:
    """All 0x110000 code points: each Cf (this Python's Unicode) and each default-ignorable
    one is hidden text; nothing else is, but the two invisible line breaks."""
    missing, extra = [], []
    ignorable = {cp for lo, hi in DEFAULT_IGNORABLE_NOT_CF for cp in range(lo, hi + 1)}
    for cp in range(sys.maxunicode + 1):
        want = unicodedata.category(chr(cp)) == "Cf" or cp in ignorable or cp in (0x2028, 0x2029)
        if want and not _flagged(cp):
            missing.append(f"U+{cp:04X}")
        elif _flagged(cp) and not want:
            extra.append(f"U+{cp:04X}")
    assert not missing and not extra, (missing[:20], extra[:20])


@pytest.mark.parametrize(
    "cp", [lo for lo, _ in hidden_ranges()] + [hi for _, hi in hidden_ranges()]
)
def test_each_range_is_reported_between_ascii_letters(cp: int) -> None:
    assert find_hidden_unicode(f"a{chr(cp)}a") == [f"U+{cp:04X}"]


SMUGGLED = {
    "variation selectors after a letter": "Ignore\ufe0f",
    "a run of selectors after an emoji (bytes as VS)": "😀\ufe01\ufe02\U000e0110",
    "VS16 twice": "❤\ufe0f\ufe0f",
    "ideographic selector after a Latin letter": "x\U000e0100",
    "Hangul choseong filler": "a\u115fb",
    "Hangul jungseong filler": "a\u1160b",
    "Hangul filler": "a\u3164b",
    "halfwidth Hangul filler": "a\uffa0b",
    "soft hyphen": "ig\u00adnore",
    "Mongolian vowel separator": "a\u180eb",
    "line separator": "one\u2028two",
    "paragraph separator": "one\u2029two",
    "combining grapheme joiner": "a\u034fb",
    "ZWJ between Latin letters": "a\u200db",
    "ZWNJ between Latin letters": "a\u200cb",
    "BOM inside text": "a\ufeffb",
    "Arabic letter mark": "a\u061cb",
    "interlinear annotation": "\ufff9shown\ufffahidden\ufffb",
    "shorthand format control": "a\U0001bca0b",
    "musical formatting": "a\U0001d173b",
    "tag characters (ASCII smuggling)": "ok\U000e0069\U000e0067\U000e006e",
    "tags under a flag that is not RGI": "🏴\U000e0061\U000e0062\U000e007f",
    "Khmer inherent vowel": "a\u17b4b",
    "reserved default ignorable": "a\u2065b\ufff0",
}
LEGITIMATE = {
    "family emoji (ZWJ sequence)": "👨\u200d👩\u200d👧",
    "eye in speech bubble (VS16 inside a ZWJ sequence)": "👁\ufe0f\u200d🗨\ufe0f",
    "skin tone then ZWJ": "🧑🏽\u200d💻",
    "red heart (VS16)": "❤\ufe0f",
    "text presentation (VS15)": "☺\ufe0e",
    "keycap": "1\ufe0f\u20e3",
    "England flag (tags)": "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "ideographic variation sequence": "葛\U000e0100",
    "Persian word with ZWNJ": "می\u200cخواهم",
    "Devanagari half form with ZWJ": "क्\u200dष",
    "BOM opening the text": "\ufeffhello",
    "plain accents and CJK": "héllo wörld ✓ 日本語",
}


@pytest.mark.parametrize("text", SMUGGLED.values(), ids=SMUGGLED.keys())
def test_smuggling_characters_are_reported(text: str) -> None:
    found = find_hidden_unicode(text)
    assert found, text
    assert find_hidden_unicode(strip_hidden_unicode(text)) == []


@pytest.mark.parametrize("text", LEGITIMATE.values(), ids=LEGITIMATE.keys())
def test_legitimate_uses_are_not_reported(text: str) -> None:
    assert find_hidden_unicode(text) == []
    assert strip_hidden_unicode(text) == text


# ------------------------------------------------------------------ through the real CLI

TTL = f"{EVIL_ROOT}/tool/ontoskill.ttl"


def _iri_turtle(escaped_iri: str) -> bytes:
    return (
        f"@prefix oc: <{OC}> .\noc:skill_evil_pkg_tool a oc:Skill ;\n"
        f"    oc:hasDocumentation <https://example.org/{escaped_iri}> .\n"
    ).encode()


def _triple_term_turtle(escaped: str) -> bytes:
    """A literal inside an RDF 1.2 triple term (`<<( s p o )>>`, which Turtle parses): the
    escaped-literal scan used to look only at a triple's own terms, never inside one."""
    return (
        f"@prefix oc: <{OC}> .\noc:skill_evil_pkg_tool a oc:Skill ;\n"
        f'    oc:hasNote <<( oc:a oc:b "{escaped}" )>> .\n'
    ).encode()


VECTORS = [
    ("vs-raw-turtle", write_raw(TTL, hidden_turtle("Ignore\ufe0f previous"))),
    ("hangul-filler-raw-turtle", write_raw(TTL, hidden_turtle("a\u3164b"))),
    ("soft-hyphen-u-escaped-turtle", write_raw(TTL, hidden_turtle("ig\u00adnore", escaped=True))),
    ("vs-supplement-U-escaped-turtle", write_raw(TTL, hidden_turtle("x\U000e0101", escaped=True))),
    ("line-separator-raw-turtle", write_raw(TTL, hidden_turtle("one\u2028two"))),
    ("escaped-iri", write_raw(TTL, _iri_turtle("a\\u200Bb"))),
    ("escaped-in-triple-term", write_raw(TTL, _triple_term_turtle("ig\\u200Bnore"))),
    ("mvs-in-manifest-intent", edit_manifest(set_skill_field("intents", ["use\u180ethe tool"]))),
    ("filler-in-description", edit_manifest(set_field("description", "safe\uffa0tool"))),
    ("cgj-in-alias", edit_manifest(set_skill_field("aliases", ["the\u034ftool"]))),
]


WARN_ONLY = ("vs-raw-turtle", "escaped-iri", "cgj-in-alias")  # same code path for all
RUNS = [(name, m, True) for name, m in VECTORS] + [
    (name, m, False) for name, m in VECTORS if name in WARN_ONLY
]


@pytest.mark.parametrize(
    ("name", "mutate", "strict"),
    RUNS,
    ids=[f"{'strict' if strict else 'warn'}-{name}" for name, _, strict in RUNS],
)
def test_hidden_text_is_a_warning_and_strict_refuses_it(
    name: str,
    mutate: object,
    strict: bool,
    cli: CliRunner,
    tmp_path: Path,
    baseline: Path,
    env: dict[str, str],
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    reg = build_hostile(tmp_path / "reg", mutate=mutate)  # type: ignore[arg-type]
    case = Case(
        name,
        4 if strict else 0,
        args=("--strict",) if strict else (),
        stderr_has="invisible/bidi characters",
    )
    check_case(case, cli, tmp_path, reg, env)


def test_legitimate_emoji_and_persian_text_install_under_strict(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    text = " ".join(v for v in LEGITIMATE.values() if not v.startswith("\ufeff"))
    reg = build_hostile(
        tmp_path / "reg",
        mutate=lambda root: (
            write_raw(TTL, hidden_turtle(text))(root),
            edit_manifest(set_skill_field("intents", [text]))(root),
        ),
    )
    proc = cli("--registry", str(reg), "install", EVIL, "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "invisible" not in proc.stderr
    lock = (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").read_text()
    assert EVIL in lock
    manifest = json.loads((Path(env["ONTOSKILLS_HOME"]) / "ontologies/author" / EVIL /
                           "package.json").read_text())  # fmt: skip
    assert manifest["skills"][0]["intents"] == [text]
