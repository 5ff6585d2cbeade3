"""tomlio: both readers (tomllib for data, tomlkit for a file we edit) fail the same way,
as the caller's error class naming the source, whatever the cause."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ontoskills import tomlio
from ontoskills.errors import ConfigError, FormatError, OntoskillsError


def _loads(data: bytes, error: type[OntoskillsError], max_bytes: int) -> Any:
    return tomlio.loads(data, source="cfg.toml", error=error, max_bytes=max_bytes, hint="fix it")


def _document(data: bytes, error: type[OntoskillsError], max_bytes: int) -> Any:
    return tomlio.parse_document(
        data, source="cfg.toml", error=error, max_bytes=max_bytes, hint="fix it"
    )


READERS = [pytest.param(_loads, id="loads"), pytest.param(_document, id="parse_document")]
Reader = Callable[[bytes, type[OntoskillsError], int], Any]


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("error", [ConfigError, FormatError])
@pytest.mark.parametrize(
    ("data", "max_bytes", "says"),
    [
        (b"a = 1\n" * 10, 20, "over the limit of 20"),  # the size bound
        (b"a = \xff\n", 1000, "not valid UTF-8"),  # the bytes are not text
        (b"a = = 1\n", 1000, "invalid TOML ("),  # either parser's syntax error
        (b"a = " + b"[" * 200 + b"]" * 200 + b"\n", 10_000, "nested"),  # the depth bound
    ],
)
def test_every_failure_is_the_callers_error(
    read: Reader, error: type[OntoskillsError], data: bytes, max_bytes: int, says: str
) -> None:
    with pytest.raises(error) as info:
        read(data, error, max_bytes)
    assert type(info.value) is error
    assert info.value.message.startswith("cfg.toml: ")
    assert says in info.value.message
    assert info.value.hint == "fix it"


@pytest.mark.parametrize("read", READERS)
def test_a_valid_file_reads(read: Reader) -> None:
    assert read(b'[t]\nk = "v"\n', ConfigError, 1000)["t"]["k"] == "v"
