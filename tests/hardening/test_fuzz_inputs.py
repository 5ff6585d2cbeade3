"""Property tests for the inputs issue 13 (classes 4, 5, 6, 8) added: environment values,
Retry-After, git refs, hidden-text detection, the JSON value budget, path collisions and the
serve stdin screen. Each either returns a well-formed value or raises an ontoskills error;
no other exception. Same profiles as test_fuzz_parsers.py (ci fast, slow for fuzz.py)."""

from __future__ import annotations

import atexit
import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from ontoskills import envvars, jsonio
from ontoskills.errors import LimitExceededError, UsageError
from ontoskills.safety import (
    find_hidden_unicode,
    find_path_collision,
    hidden_ranges,
    safe_join,
    strip_hidden_unicode,
)
from ontoskills.server.runner import _screen
from ontoskills.sources._retry import parse_retry_after
from ontoskills.sources.git import check_ref_component, ref_problem
from tests.hardening import strategies as hs

SANDBOX = Path(tempfile.mkdtemp(prefix="ontoskills-fuzz-inputs-"))
# Made at import (hypothesis needs fixed paths), so removed at interpreter exit, not by a fixture.
atexit.register(shutil.rmtree, SANDBOX, ignore_errors=True)


@given(st.sampled_from(sorted(envvars.VARS)), hs.env_values)
@example("ONTOSKILLS_LOCK_TIMEOUT", "nan")
@example("ONTOSKILLS_MAX_FILE_MB", "١٢")
@example("ONTOSKILLS_RETRY_MAX", "1e999")
def test_env_numbers_are_in_range_or_a_usage_error(name: str, raw: str) -> None:
    var = envvars.VARS[name]
    try:
        value = envvars.get(name, {name: raw})
    except UsageError as exc:
        assert name in exc.message and exc.exit_code == 2
        return
    assert math.isfinite(value) and var.minimum <= value <= var.maximum
    assert not var.integer or value == int(value)


@given(hs.retry_after_values)
@example("²")
@example("Sun, 06 Nov 1994 08:49:37 GMT")
@example("9" * 5000)
def test_retry_after_is_none_or_a_finite_wait(value: str) -> None:
    wait = parse_retry_after(value, now=784111777.0)
    assert wait is None or (math.isfinite(wait) and wait >= 0)


@given(st.text(max_size=40))
@example("a..b")
@example("x.lock")
def test_ref_checks_never_crash(value: str) -> None:
    problem = ref_problem(value)
    assert problem is None or isinstance(problem, str)
    try:
        assert check_ref_component(value, "version") == value
    except UsageError as exc:
        assert exc.exit_code == 2
    if problem is None and "/" not in value:  # what we accept, git accepts
        assert ".." not in value and not value.endswith((".lock", ".", "/"))


@given(hs.hidden_texts)
def test_hidden_text_detection_is_consistent(text: str) -> None:
    found = find_hidden_unicode(text)
    ranges = hidden_ranges()
    assert all(any(lo <= int(cp[2:], 16) <= hi for lo, hi in ranges) for cp in found)
    stripped = strip_hidden_unicode(text)
    assert find_hidden_unicode(stripped) == []  # stripping removes every finding
    if text.isascii():
        assert found == []


@given(hs.json_values, st.integers(min_value=1, max_value=40))
def test_json_value_budget_is_never_exceeded(doc: Any, budget: int) -> None:
    data = hs.encode(doc)
    try:
        value = jsonio.loads(data, source="f.json", max_items=budget)
    except LimitExceededError:
        return
    assert _count(value) <= budget


def _count(value: Any) -> int:
    """Values + keys, as the budget counts them."""
    if isinstance(value, dict):
        return 1 + sum(1 + _count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_count(v) for v in value)
    return 1


@given(st.lists(hs.relpaths, max_size=8))
@example(["a", "a/b"])
@example(["A.ttl", "a.ttl"])
def test_paths_without_collision_can_all_be_written(paths: list[str]) -> None:
    """What find_path_collision accepts, the installer can create side by side."""
    if find_path_collision(paths) is not None:
        return
    root = SANDBOX / "root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for rel in paths:
        dest = safe_join(root, rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"x")  # never IsADirectory / NotADirectory / FileExists


@given(hs.jsonrpc_lines)
@example('{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\ud800"}}\n')
@example('{"jsonrpc":"2.0","id":"\\ud800","method":"m"}\n')
def test_serve_screen_never_crashes_and_emits_encodable_json(line: str) -> None:
    out = _screen(line)
    if out == line:
        return
    msg = json.loads(out)
    json.dumps(msg, ensure_ascii=False).encode("utf-8")  # no surrogate reaches the wire
    assert msg["method"] == "ontoskills/undecodable-request"
