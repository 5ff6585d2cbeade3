"""Rules for names and paths that come from untrusted registries.

Everything a registry sends us is untrusted: package ids, skill ids, manifest paths. These
checks fail closed and raise UnsafePathError (exit 4) with the offending value quoted.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from .errors import UnsafePathError, UsageError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
MAX_PATH_LEN = 1024
MAX_SEGMENT_BYTES = 255

# Hidden text: characters that render as nothing (or reorder what is shown) are a classic
# way to hide instructions from a human reviewer while an agent still reads them. The set
# is derived from Unicode properties, not listed by hand: every format character (general
# category Cf: bidi controls, zero-width characters, soft hyphen, U+180E, tags, interlinear
# annotation, ...) plus the Default_Ignorable_Code_Point ranges of DerivedCoreProperties.txt
# that are not Cf (below), plus the line/paragraph separators that many viewers do not
# render as a break. Legitimate uses in context are allowed by `_legitimate`.
_IGNORABLE_NOT_CF = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul choseong / jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors and vowel separator
    (0x2065, 0x2065),  # reserved (default ignorable)
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # reserved (default ignorable)
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement, reserved
)
_INVISIBLE_BREAKS = ((0x2028, 0x2029),)  # line and paragraph separators (Zl, Zp)
# Planes scanned for Cf: the BMP, the SMP and the SSP. Planes 2-3 hold only ideographs and
# 4-13 are unassigned (tests/hardening/test_hidden_text.py checks all 0x110000 code points).
_CF_SCAN = (range(0x0000, 0x20000), range(0xE0000, 0xF0000))


@functools.cache
def hidden_ranges() -> tuple[tuple[int, int], ...]:
    """Code point ranges treated as hidden text (built once, on first use: ~25 ms)."""
    points = {cp for r in _CF_SCAN for cp in r if unicodedata.category(chr(cp)) == "Cf"}
    for lo, hi in (*_IGNORABLE_NOT_CF, *_INVISIBLE_BREAKS):
        points.update(range(lo, hi + 1))
    ranges: list[tuple[int, int]] = []
    for cp in sorted(points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return tuple(ranges)


@functools.cache
def _hidden_re() -> re.Pattern[str]:
    return re.compile(
        "["
        + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in hidden_ranges())
        + "]"
    )


def is_valid_name(name: object) -> bool:
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


def check_name(name: object, what: str) -> str:
    """Validate one id segment (author, package or skill name)."""
    if not is_valid_name(name):
        raise UnsafePathError(
            f"invalid {what} {name!r}: must match {NAME_RE.pattern}",
        )
    assert isinstance(name, str)
    return name


def split_package_id(package_id: object, what: str = "package id") -> tuple[str, str]:
    if not isinstance(package_id, str) or package_id.count("/") != 1:
        raise UnsafePathError(f"invalid {what} {package_id!r}: expected 'author/package'")
    author, name = package_id.split("/")
    return check_name(author, f"author in {what}"), check_name(name, f"package in {what}")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Parse a user's install spec: 'author/pkg' or 'author/pkg/skill'.

    Returns (package_id, skill_or_None). User typos are usage errors (exit 2), not
    integrity errors, because nothing untrusted is involved.
    """
    parts = spec.strip().split("/")
    if len(parts) not in (2, 3) or not all(is_valid_name(p) for p in parts):
        raise UsageError(
            f"invalid package spec {spec!r}",
            hint="use author/package or author/package/skill (lowercase, digits, . _ -)",
        )
    return f"{parts[0]}/{parts[1]}", (parts[2] if len(parts) == 3 else None)


def check_relpath(path: object, what: str = "path") -> str:
    """Validate a relative POSIX path from a manifest; return it unchanged.

    Refuses: non-strings, empty, NUL and control characters, backslashes, absolute paths,
    drive letters, URL schemes, '.', '..' and empty segments, overlong paths.
    """
    if not isinstance(path, str) or not path:
        raise UnsafePathError(f"unsafe {what} {path!r}: expected a non-empty relative path")
    # bytes, not characters: 1,024 CJK characters are 3,072 bytes, and with the home in
    # front the OS refuses the whole path (ENAMETOOLONG at 4,096 on Linux)
    if len(path) > MAX_PATH_LEN or (
        not path.isascii() and len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_LEN
    ):
        raise UnsafePathError(f"unsafe {what}: longer than {MAX_PATH_LEN} bytes")
    if _CONTROL_RE.search(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: control character")
    if "\\" in path:
        raise UnsafePathError(f"unsafe {what} {path!r}: backslash (paths must be POSIX)")
    if not path.isascii():
        try:  # JSON "\ud800" decodes to a lone surrogate that no filesystem can name
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise UnsafePathError(f"unsafe {what} {path!r}: not valid Unicode") from None
    if path.startswith("/") or _SCHEME_RE.match(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: absolute path or URL not allowed")
    if not path.isascii() and _hidden_re().search(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: invisible or bidi characters")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise UnsafePathError(f"unsafe {what} {path!r}: '{segment or '//'}' segment")
        # a UTF-8 character is at most 4 bytes: only long segments need encoding
        if len(segment) * 4 > MAX_SEGMENT_BYTES and len(segment.encode()) > MAX_SEGMENT_BYTES:
            raise UnsafePathError(f"unsafe {what} {path!r}: segment too long")
    return path


def find_path_collision(paths: Iterable[str]) -> tuple[str, str] | None:
    """Two paths that cannot both exist: one is a folder of the other ('a' and 'a/b'), or
    they differ only in case or Unicode normalisation (one file on macOS and Windows)."""

    def fold(p: str) -> str:
        return p.lower() if p.isascii() else unicodedata.normalize("NFC", p).casefold()

    folded: dict[str, str] = {}
    for p in sorted(set(paths)):
        key = fold(p)
        if key in folded:
            return folded[key], p
        folded[key] = p
    for key, p in folded.items():
        parts = key.split("/")
        for k in range(1, len(parts)):
            other = folded.get("/".join(parts[:k]))
            if other is not None:
                return other, p
    return None


def safe_join(root: Path, relpath: str, what: str = "path") -> Path:
    """Join a validated relative path under root and prove it stays there.

    The containment check resolves symlinks on the existing part of the path, so a symlinked
    parent planted inside root cannot redirect writes elsewhere.
    """
    check_relpath(relpath, what)
    target = root.joinpath(*relpath.split("/"))
    real_root = os.path.realpath(root)
    real_target = os.path.realpath(target)
    if os.path.commonpath([real_root, real_target]) != real_root:
        raise UnsafePathError(f"unsafe {what} {relpath!r}: resolves outside {root}")
    return target


def _hidden_positions(text: str) -> list[int]:
    if text.isascii():
        return []
    # Scanning the text's distinct characters first is ~2x cheaper than scanning the text
    # (a Turtle module has a few dozen distinct characters in tens of KB): install checks
    # every file it writes, and almost none holds a hidden character.
    if not _hidden_re().search("".join(set(text))):
        return []
    return [m.start() for m in _hidden_re().finditer(text) if not _legitimate(text, m.start())]


def find_hidden_unicode(text: str) -> list[str]:
    """The code points (as U+XXXX) of invisible/bidi characters in text, in order, except
    legitimate uses in context (emoji sequences, a BOM, joiners inside Arabic/Indic words)."""
    return [f"U+{ord(text[i]):04X}" for i in _hidden_positions(text)]


def strip_hidden_unicode(text: str) -> str:
    drop = set(_hidden_positions(text))
    return "".join(c for i, c in enumerate(text) if i not in drop) if drop else text


# Legitimate uses, judged on the neighbouring characters ----------------------------------
_TAG_FLAGS = (
    frozenset(  # the three RGI subdivision flags: 🏴 + tags "gbeng"/"gbsct"/"gbwls" + cancel
        "".join(chr(0xE0000 + ord(c)) for c in name) + "\U000e007f"
        for name in ("gbeng", "gbsct", "gbwls")
    )
)
_SKIN_TONES = range(0x1F3FB, 0x1F400)


# Emoji=Yes, from Unicode's emoji-data.txt (Emoji 15.0, 2022-08-02): 1,424 code points in
# 151 ranges, written by scripts/emoji_table.py. What may carry VS15/VS16 or join a ZWJ
# sequence is this property, not a general category: U+2139 INFORMATION SOURCE is Ll, and
# U+2139 U+FE0F is the standard emoji 'information' that three anthropics packages use.
_EMOJI_RANGES = (
    "23 2A 30-39 A9 AE 203C 2049 2122 2139 2194-2199 21A9-21AA 231A-231B 2328 23CF 23E9-23F3 "
    "23F8-23FA 24C2 25AA-25AB 25B6 25C0 25FB-25FE 2600-2604 260E 2611 2614-2615 2618 261D "
    "2620 2622-2623 2626 262A 262E-262F 2638-263A 2640 2642 2648-2653 265F-2660 2663 "
    "2665-2666 2668 267B 267E-267F 2692-2697 2699 269B-269C 26A0-26A1 26A7 26AA-26AB "
    "26B0-26B1 26BD-26BE 26C4-26C5 26C8 26CE-26CF 26D1 26D3-26D4 26E9-26EA 26F0-26F5 "
    "26F7-26FA 26FD 2702 2705 2708-270D 270F 2712 2714 2716 271D 2721 2728 2733-2734 2744 "
    "2747 274C 274E 2753-2755 2757 2763-2764 2795-2797 27A1 27B0 27BF 2934-2935 2B05-2B07 "
    "2B1B-2B1C 2B50 2B55 3030 303D 3297 3299 1F004 1F0CF 1F170-1F171 1F17E-1F17F 1F18E "
    "1F191-1F19A 1F1E6-1F1FF 1F201-1F202 1F21A 1F22F 1F232-1F23A 1F250-1F251 1F300-1F321 "
    "1F324-1F393 1F396-1F397 1F399-1F39B 1F39E-1F3F0 1F3F3-1F3F5 1F3F7-1F4FD 1F4FF-1F53D "
    "1F549-1F54E 1F550-1F567 1F56F-1F570 1F573-1F57A 1F587 1F58A-1F58D 1F590 1F595-1F596 "
    "1F5A4-1F5A5 1F5A8 1F5B1-1F5B2 1F5BC 1F5C2-1F5C4 1F5D1-1F5D3 1F5DC-1F5DE 1F5E1 1F5E3 "
    "1F5E8 1F5EF 1F5F3 1F5FA-1F64F 1F680-1F6C5 1F6CB-1F6D2 1F6D5-1F6D7 1F6DC-1F6E5 1F6E9 "
    "1F6EB-1F6EC 1F6F0 1F6F3-1F6FC 1F7E0-1F7EB 1F7F0 1F90C-1F93A 1F93C-1F945 1F947-1F9FF "
    "1FA70-1FA7C 1FA80-1FA88 1FA90-1FABD 1FABF-1FAC5 1FACE-1FADB 1FAE0-1FAE8 1FAF0-1FAF8 "
)


@functools.cache
def _emoji_table() -> tuple[list[int], list[int]]:
    starts, ends = [], []
    for token in _EMOJI_RANGES.split():
        lo, _, hi = token.partition("-")
        starts.append(int(lo, 16))
        ends.append(int(hi or lo, 16))
    return starts, ends


def is_emoji(c: str) -> bool:
    """The Emoji property (Emoji=Yes) of one character."""
    starts, ends = _emoji_table()
    i = bisect.bisect_right(starts, ord(c)) - 1
    return i >= 0 and ord(c) <= ends[i]


def _is_emoji_base(c: str) -> bool:
    """An emoji that VS15/VS16 may follow and a ZWJ may join: Emoji=Yes but not ASCII, as
    `#`, `*` and `0`-`9` are emoji only as keycaps (`1` U+FE0F U+20E3: judged below)."""
    return not c.isascii() and is_emoji(c)


def _is_ideograph(c: str) -> bool:
    cp = ord(c)
    return 0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF


def _is_joining_letter(c: str) -> bool:
    """A letter or mark of the scripts that use ZWJ/ZWNJ inside words (Arabic, Syriac, Thaana,
    N'Ko, the Indic scripts, Sinhala, Arabic presentation forms)."""
    cp = ord(c)
    in_script = 0x0600 <= cp <= 0x0DFF or 0xFB50 <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFF
    return in_script and unicodedata.category(c)[0] in "LM"


def _legitimate(text: str, i: int) -> bool:
    """Whether the invisible character at `text[i]` is legitimate where it stands, judged
    on its neighbours (docs/RELIABILITY.md "Hidden text")."""
    cp = ord(text[i])
    prev = text[i - 1] if i > 0 else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if cp == 0xFEFF:
        return i == 0  # a byte order mark opening the text
    if cp in (0x200C, 0x200D):  # ZWNJ / ZWJ
        return _legitimate_joiner(text, i, prev, nxt)
    if cp in (0xFE0E, 0xFE0F):  # text / emoji presentation, once, after an emoji-capable base
        return bool(prev) and (_is_emoji_base(prev) or (prev in "0123456789#*" and nxt == "\u20e3"))
    if 0xFE00 <= cp <= 0xFE0D or 0xE0100 <= cp <= 0xE01EF:
        return bool(prev) and _is_ideograph(prev)  # a standardized / ideographic variant
    if cp in (0x180B, 0x180C, 0x180D, 0x180F):
        return bool(prev) and 0x1820 <= ord(prev) <= 0x18AF  # Mongolian free variation
    if 0xE0020 <= cp <= 0xE007F:  # tags: only inside the RGI subdivision flags
        return _in_tag_flag(text, i)
    return False


def _legitimate_joiner(text: str, i: int, prev: str, nxt: str) -> bool:
    """ZWNJ / ZWJ: one joiner inside a word of a joining script (Persian "می‌خواهم",
    Devanagari half forms), or a ZWJ inside an emoji sequence."""
    if prev and nxt and _is_joining_letter(prev) and _is_joining_letter(nxt):
        return True
    if ord(text[i]) == 0x200D and nxt and _is_emoji_base(nxt):
        j = i - 1  # an emoji ZWJ sequence: skip the base's VS16 / skin tone
        while j > 0 and (text[j] == "\ufe0f" or ord(text[j]) in _SKIN_TONES):
            j -= 1
        return j >= 0 and _is_emoji_base(text[j])
    return False


def _in_tag_flag(text: str, i: int) -> bool:
    """A tag character inside one of the RGI subdivision flags (the only legitimate tags)."""
    start = i
    while start > 0 and 0xE0020 <= ord(text[start - 1]) <= 0xE007F:
        start -= 1
    end = i
    while end < len(text) and 0xE0020 <= ord(text[end]) <= 0xE007F:
        end += 1
    return text[start - 1 : start] == "\U0001f3f4" and text[start:end] in _TAG_FLAGS


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)
