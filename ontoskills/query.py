"""The query grammar, one home for the MCP tool, the CLI and the search service.

A query `q` is one of:
- a search in plain words ("fill a PDF form");
- a skill's name or key ("pdf", "acme/docs/pdf"): that skill (the name index decides);
- `<skill>#<part>` ("acme/docs/pdf#knowledge"), page N as `<part>/N` (also `@N`, `:N`).

Two lengths with one name each: a query longer than `QUERY_MAX_CHARS` is refused (the MCP
tool's schema says so; the CLI and library callers get the same refusal), and only its first
`QUERY_SCORED_CHARS` are scored (the encoder reads 128 tokens anyway; BM25 gains nothing from a
pasted log's tail). The text is read as valid Unicode: a lone surrogate (an undecodable argv
byte, a JSON `"\\ud800"` escape) becomes U+FFFD, since the tokenizer refuses it and echoing it
back would be invalid JSON.
"""

from __future__ import annotations

from .asciinum import DIGITS, uint
from .errors import UsageError

QUERY_MAX_CHARS = 16_384  # refused above this (the MCP tool's `maxLength`)
QUERY_SCORED_CHARS = 2_000  # what search scores of a longer query
PAGE_SEPARATORS = "/@:"  # part/2, part@2, part:2
_PAGE_DIGITS = 9  # a longer run of digits is part of the name, not a page number


def valid_text(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (pairs survive the round trip). Valid
    text is returned as it is (the common case costs one encode). Also what the encoder
    applies to every text it embeds: the tokenizer (Rust) raises TypeError on a lone half."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean(q: str) -> str:
    """The query as it is read: valid Unicode, outer whitespace off, not empty, not over
    `QUERY_MAX_CHARS`. UsageError (exit 2; the MCP tool: an error result) otherwise."""
    text = valid_text(q).strip()
    if not text:
        raise UsageError("the query is empty", hint='describe the task, e.g. "debug a test"')
    if len(text) > QUERY_MAX_CHARS:
        raise UsageError(
            f"the query is longer than {QUERY_MAX_CHARS} characters", hint="shorten it"
        )
    return text


def scored(q: str) -> str:
    """The part of a (clean) query that search scores."""
    return q[:QUERY_SCORED_CHARS]


def split_ref(q: str) -> tuple[str, str] | None:
    """'acme/docs/pdf#knowledge/2' -> ('acme/docs/pdf', 'knowledge/2'); None if not a ref.

    The last '#' splits (skill IRIs contain one); the skill side has no spaces, so a
    question such as "C# async patterns" stays a search.
    """
    skill, sep, spec = q.strip().rpartition("#")
    skill = skill.strip()
    if not sep or not skill or any(c.isspace() for c in skill):
        return None
    return skill, spec.strip()


def parse_part(spec: str) -> tuple[str, int | None]:
    """'knowledge/2' (also '@2', ':2') -> ('knowledge', 2); 'code-3' -> ('code-3', None).

    Scanned by hand from the end: a regex with a lazy name and optional spaces backtracks
    quadratically on a long run of spaces (16k chars of `q` took ~40 s). ASCII digits only.
    """
    text = spec.strip()
    end = len(text)
    digits = end
    while digits > 0 and text[digits - 1] in DIGITS:
        digits -= 1
    sep = len(text[:digits].rstrip())
    number = uint(text[digits:]) if 0 < end - digits <= _PAGE_DIGITS else None
    if number is None or sep == 0 or text[sep - 1] not in PAGE_SEPARATORS:
        return text, None
    return text[: sep - 1].strip(), number
