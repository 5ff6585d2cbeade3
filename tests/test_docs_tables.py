"""Every markdown table in README.md and docs/*.md is whole: a header row, then a separator
row of as many columns, then rows of that width, with a blank line before and after it.

Merges of our docs have dropped header rows (a merge tool keyed rows by their first cell),
glued two separator rows into one (`|---|---||---|...`) and joined a table to the paragraph
after it, which GitHub's renderer then reads as one more row. Each failure names file:line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tests.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
SEPARATOR_CELL = re.compile(r"^\s*:?-+:?\s*$")


def cells(row: str) -> list[str]:
    """The cells of one table row: split on `|` not escaped as `\\|` (as GFM does, inside
    code spans too), the outer pipes dropped."""
    text = row.strip()
    text = text[1:] if text.startswith("|") else text
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return re.split(r"(?<!\\)\|", text)


def is_separator(row: str) -> bool:
    return all(SEPARATOR_CELL.match(c) for c in cells(row))


def tables(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(line number of its first row, its rows) for each run of lines starting with `|`
    outside fenced code blocks (indented tables in list items too)."""
    fence: str | None = None
    start, rows = 0, []
    for n, line in enumerate([*lines, ""], 1):
        mark = FENCE.match(line)
        if fence is None and line.lstrip().startswith("|"):
            start, rows = (start, rows) if rows else (n, [])
            rows.append(line)
            continue
        if rows:
            yield start, rows
            rows = []
        if mark and fence is None:
            fence = mark.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None


def problems(name: str, text: str) -> list[str]:
    lines = text.splitlines()
    out: list[str] = []
    for start, rows in tables(lines):
        where = f"{name}:{start}"
        if is_separator(rows[0]):
            out.append(f"{where}: a separator row with no header row above it")
            continue
        if len(rows) < 2 or not is_separator(rows[1]):
            out.append(f"{where}: no separator row under the header {rows[0].strip()[:60]!r}")
            continue
        width = len(cells(rows[0]))
        for offset, row in enumerate(rows[1:], 1):
            if len(cells(row)) != width:
                out.append(
                    f"{name}:{start + offset}: {len(cells(row))} columns, the header has {width}"
                )
        before = start - 2  # index of the line above the first row
        after = start - 1 + len(rows)  # index of the line below the last row
        if before >= 0 and lines[before].strip():
            out.append(f"{where}: no blank line before the table")
        if after < len(lines) and lines[after].strip():
            out.append(f"{name}:{after + 1}: no blank line after the table (read as a row)")
    return out


def test_every_table_in_the_docs_is_whole() -> None:
    assert len(DOCS) > 5  # README.md and docs/*.md were found
    found = sum(1 for p in DOCS for _ in tables(p.read_text(encoding="utf-8").splitlines()))
    assert found > 20  # the walk sees the docs' tables
    bad = [line for p in DOCS for line in problems(p.name, p.read_text(encoding="utf-8"))]
    assert bad == [], "broken markdown tables:\n" + "\n".join(bad)


def test_the_checker_finds_what_merges_broke() -> None:
    """The shapes a merge of our docs produced, each found; a whole table passes, and pipes
    escaped inside a cell or in a code block are not columns."""
    whole = "text\n\n| a | b |\n|---|:--:|\n| `x\\|y` | 2 |\n\n```\n| not | a | table |\n```\n"
    assert problems("ok.md", whole) == []
    no_header = "x\n\n|---|---|\n| 1 | 2 |\n"
    assert problems("d.md", no_header) == ["d.md:3: a separator row with no header row above it"]
    glued = "x\n\n| a | b |\n|---|---||---|---|\n| 1 | 2 |\n"
    assert problems("d.md", glued) == ["d.md:3: no separator row under the header '| a | b |'"]
    header_lost = "x\n\n| 1 | 2 |\n| 3 | 4 |\n"
    assert problems("d.md", header_lost) == [
        "d.md:3: no separator row under the header '| 1 | 2 |'"
    ]
    narrow = "x\n\n| a | b | c |\n|---|---|---|\n| 1 | 2 |\n"
    assert problems("d.md", narrow) == ["d.md:5: 2 columns, the header has 3"]
    joined = "intro:\n| a | b |\n|---|---|\n| 1 | 2 |\nNext paragraph.\n"
    assert problems("d.md", joined) == [
        "d.md:2: no blank line before the table",
        "d.md:5: no blank line after the table (read as a row)",
    ]
