"""Text -> search terms: the one tokenizer for documents and queries.

NFKC, accent folding, camelCase / kebab / snake splitting, punctuation, English stop words,
Snowball stemming. The same function runs on both sides, so whatever it does is symmetric.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata

import snowballstemmer

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
STOP_WORDS = frozenset(
    """a an and are as at be been but by can could do does doing for from had has have how i
    if in into is it its it's me my no not of on or our please pls so some than that the their
    them then there these they this those to too up us use using was we were what when where
    which while who why will with would you your t s m d ll re ve want need should
    """.split()  # noqa: SIM905
)
_stemmer = snowballstemmer.stemmer("english")
# A Snowball stemmer keeps the word being stemmed in its own fields: two threads stemming at
# once (the server answers calls in worker threads) garble each other's words or raise
# IndexError, and a garbled stem would then stay in the cache below for the process's life.
_stem_lock = threading.Lock()
# Longer "words" are hashes, base64, minified code or hostile input: no query is helped by
# them, and each one would cost stemming time and a cache slot. Dropped on both sides.
MAX_WORD = 64


def fold(text: str) -> str:
    """NFKC, then drop combining marks (é -> e) so accented and plain spellings meet."""
    if text.isascii():
        return text  # both steps are the identity on ASCII (most text): skip them
    text = unicodedata.normalize("NFKC", text)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    with _stem_lock:
        return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """Lower-cased words after folding and camelCase/kebab/snake splitting (no stemming)."""
    folded = _CAMEL_RE.sub(" ", fold(text))
    return [w.lower() for w in _WORD_RE.findall(folded) if len(w) <= MAX_WORD]


def tokenize(text: str, *, stop: bool = True) -> list[str]:
    """Search terms: words minus stop words, stemmed. Falls back to stop words if nothing else."""
    ws = words(text)
    kept = [w for w in ws if w not in STOP_WORDS] if stop else ws
    return [stem(w) for w in (kept or ws)]
