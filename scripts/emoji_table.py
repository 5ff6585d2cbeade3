"""Print `safety._EMOJI_RANGES`: the Emoji=Yes code points of Unicode's emoji-data.txt.

    python scripts/emoji_table.py /usr/share/unicode/emoji/emoji-data.txt

(Debian's `unicode-data` package ships the file; so does every Unicode release under
ucd/emoji/.) Paste the output over the table in ontoskills/safety.py and update the version
in its comment; tests/hardening/test_r3_encoding.py checks known members and non-members.
"""

from __future__ import annotations

import sys
import textwrap


def emoji_ranges(text: str) -> list[tuple[int, int]]:
    ranges = []
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) != 2 or fields[1].strip() != "Emoji":
            continue
        lo, _, hi = fields[0].strip().partition("..")
        ranges.append((int(lo, 16), int(hi or lo, 16)))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and merged[-1][1] >= lo - 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def main(path: str) -> None:
    text = open(path, encoding="utf-8").read()
    version = next((ln for ln in text.splitlines() if "Emoji Version" in ln), "?").strip("# ")
    merged = emoji_ranges(text)
    tokens = " ".join(f"{lo:X}" if lo == hi else f"{lo:X}-{hi:X}" for lo, hi in merged)
    count = sum(hi - lo + 1 for lo, hi in merged)
    print(f"# {version}: {count:,} code points in {len(merged)} ranges")
    print("_EMOJI_RANGES = (")
    for line in textwrap.wrap(tokens, 88):
        print(f'    "{line} "')
    print(")")


if __name__ == "__main__":
    main(sys.argv[1])
