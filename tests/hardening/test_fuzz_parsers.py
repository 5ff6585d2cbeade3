"""Property tests: every parser of untrusted input either returns a typed value or raises an
ontoskills error (with its exit code); no other exception, and nothing it accepts can make a
later write escape its root. Profiles in conftest.py (ci fast, slow for benchmarks/fuzz.py)."""

from __future__ import annotations

import atexit
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import example, given
from hypothesis import strategies as st

from ontoskills import jsonio, lockfile
from ontoskills.errors import OntoskillsError
from ontoskills.intents import parse_intents
from ontoskills.manifest import Manifest, parse_index, parse_manifest
from ontoskills.safety import check_name, check_relpath, safe_join, split_package_id
from tests.hardening import strategies as hs

EXIT_CODES = {1, 2, 3, 4, 5, 6, 7}
SANDBOX = Path(tempfile.mkdtemp(prefix="ontoskills-fuzz-"))
# Made at import (hypothesis needs fixed paths), so removed at interpreter exit, not by a fixture.
atexit.register(shutil.rmtree, SANDBOX, ignore_errors=True)
ROOT = SANDBOX / "root"
ROOT.mkdir()
(SANDBOX / "outside").mkdir()  # a sibling a traversal would land in


def _expect_ok_or_ours(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except OntoskillsError as exc:
        assert exc.exit_code in EXIT_CODES
        assert (exc.message and "\n" not in exc.message.strip("\n")) or len(exc.message) < 10_000
        return None


def _write_all_under_root(paths: list[str]) -> None:
    """Write every accepted path the way the installer does; prove nothing lands outside."""
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir()
    for rel in paths:
        dest = safe_join(ROOT, rel)
        if any(p.is_file() for p in dest.parents if ROOT in p.parents):
            continue  # 'a' then 'a/b' in one manifest: a conflict, not an escape
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.is_dir():
            dest.write_bytes(b"x")
        real = os.path.realpath(dest)
        assert real.startswith(os.path.realpath(ROOT) + os.sep), (rel, real)
    assert {p.name for p in SANDBOX.iterdir()} <= {"root", "outside", "proj", "cfg-home", "cache"}
    assert not any((SANDBOX / "outside").iterdir())


def _manifest_paths(m: Manifest) -> list[str]:
    return m.listed_paths()


@given(st.binary(max_size=300))
@example(b"[" * 100_000)
@example(b'{"a": 1, "a": 2}')
@example(b"\xff\xfe{}")
@example(b"\xef\xbb\xbf{}")
@example(b'{"x": NaN}')
@example(b'"\\ud800"')
def test_jsonio_never_crashes_on_bytes(data: bytes) -> None:
    _expect_ok_or_ours(jsonio.loads, data, source="f.json", max_bytes=1000)


@given(hs.json_values)
def test_jsonio_round_trips_valid_json(doc: Any) -> None:
    assert jsonio.loads(hs.encode(doc), source="f.json") == doc or doc != doc


@given(st.one_of(hs.manifest_dicts().map(hs.encode), st.binary(max_size=200)))
@example(hs.encode({"package_id": "a/b", "version": "1", "modules": ["x\ud800.ttl"]}))
@example(hs.encode({"package_id": "a/b", "version": "1", "files": [{"path": "a", "size": 2**80}]}))
def test_parse_manifest(data: bytes) -> None:
    m = _expect_ok_or_ours(parse_manifest, data, source="package.json")
    if m is not None:
        split_package_id(m.package_id)
        _write_all_under_root(_manifest_paths(m))


@given(hs.manifest_dicts().map(hs.encode), st.sampled_from(["a/b", "x/y"]))
def test_parse_manifest_expected_id(data: bytes, expected: str) -> None:
    m = _expect_ok_or_ours(parse_manifest, data, source="package.json", expected_id=expected)
    if m is not None:
        assert m.package_id == expected


@given(
    st.one_of(hs.index_dicts().map(hs.encode), st.binary(max_size=200)),
    st.sampled_from([None, "https://reg.example/store/", "https://reg.example/store"]),
)
def test_parse_index(data: bytes, base_url: str | None) -> None:
    idx = _expect_ok_or_ours(parse_index, data, source="index.json", base_url=base_url)
    if idx is not None:
        for entry in idx:
            split_package_id(entry.package_id)
            assert entry.trust_tier in ("community", "verified", "official")
            check_relpath(entry.manifest_path)
            assert not entry.manifest_path.startswith("..")
        _write_all_under_root([e.manifest_path for e in idx])


@given(st.one_of(hs.intents_dicts().map(hs.encode), st.binary(max_size=200)))
def test_parse_intents(data: bytes) -> None:
    result = _expect_ok_or_ours(parse_intents, data, source="intents.json")
    if result is not None:
        for vec in result.intents:
            assert len(vec.embedding) == result.dimension


@given(st.one_of(hs.paths, st.text(), hs.json_values))
def test_safety_checks_never_crash_and_never_escape(value: Any) -> None:
    rel = _expect_ok_or_ours(check_relpath, value)
    if rel is not None:
        _write_all_under_root([rel])
    _expect_ok_or_ours(check_name, value, "name")
    _expect_ok_or_ours(split_package_id, value)


def _lock_docs() -> st.SearchStrategy[dict[str, Any]]:
    sha = "a" * 64
    file = st.fixed_dictionaries(
        {
            "path": st.one_of(st.just("o.ttl"), hs.paths),
            "sha256": st.one_of(st.just(sha), st.text(max_size=3)),
            "size": st.one_of(st.integers(0, 2**40), st.text(max_size=2)),
            "executable": st.one_of(st.booleans(), st.integers(0, 1)),
        }
    )
    toml_scalars = st.one_of(st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=20))
    pkg = st.fixed_dictionaries(
        {},
        optional={
            "version": toml_scalars,
            "registry": toml_scalars,
            "trust_tier": st.one_of(
                st.sampled_from(["official", "community", "bogus"]), toml_scalars
            ),
            "requested": st.one_of(st.lists(toml_scalars, max_size=2), toml_scalars),
            "root": st.one_of(st.just("packages/a/b"), hs.paths, toml_scalars),
            "skills": st.one_of(
                st.dictionaries(st.text(max_size=5), st.booleans(), max_size=2), toml_scalars
            ),
            "files": st.one_of(st.lists(file, max_size=3), toml_scalars),
            "commit": toml_scalars,
            "with_embeddings": toml_scalars,
        },
    )
    reg = st.fixed_dictionaries(
        {"url": st.one_of(st.just("../reg"), st.just("https://x/"), toml_scalars)},
        optional={"kind": toml_scalars, "commit": toml_scalars, "index_sha256": toml_scalars},
    )
    return st.fixed_dictionaries(
        {"lock_version": st.one_of(st.just(1), toml_scalars)},
        optional={
            "packages": st.dictionaries(
                st.one_of(st.just("a/b"), st.builds(lambda x, y: f"{x}/{y}", hs.names, hs.names)),
                pkg,
                max_size=2,
            ),
            "registries": st.dictionaries(st.one_of(st.just("r"), hs.names), reg, max_size=2),
            "embeddings": st.one_of(
                toml_scalars,
                st.fixed_dictionaries({"dimension": st.one_of(st.just(384), toml_scalars)}),
            ),
        },
    )


def _toml(doc: dict[str, Any]) -> str | None:
    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError, UnicodeEncodeError):
        return None


@given(st.one_of(_lock_docs().map(_toml), st.text(max_size=200)))
@example("<<<<<<< HEAD\nlock_version = 1\n=======\n>>>>>>> x\n")
@example("lock_version = 2\n")
def test_lockfile_parse_and_round_trip(text: str | None) -> None:
    if text is None:
        return
    path = SANDBOX / "proj" / "ontoskills.lock"
    lock = _expect_ok_or_ours(lockfile.parse, text, path)
    if lock is not None:
        dumped = lockfile.dump(lock, path.parent)
        again = lockfile.parse(dumped.decode(), path)
        assert lockfile.dump(again, path.parent) == dumped  # canonical and stable
        for pkg in lock.packages.values():
            _write_all_under_root([f.path for f in pkg.files])


def _config_docs() -> st.SearchStrategy[dict[str, Any]]:
    toml_values = st.one_of(
        st.booleans(),
        st.integers(-(2**63), 2**63 - 1),
        st.text(max_size=20),
        st.floats(allow_nan=False),
        st.lists(st.integers(), max_size=2),
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "registries": st.dictionaries(
                hs.names,
                st.fixed_dictionaries(
                    {"url": st.one_of(st.just("/tmp/x"), st.just("https://h/x.git"), toml_values)},
                    optional={"kind": toml_values, "trust": toml_values},
                ),
                max_size=2,
            ),
            "search": st.dictionaries(st.sampled_from(["mode", "trust_weights"]), toml_values),
            "network": st.dictionaries(
                st.sampled_from(
                    ["timeout", "retries", "parallel", "deadline", "allow_insecure_http"]
                ),
                st.one_of(toml_values, st.floats()),  # TOML has nan and inf
            ),
            "embeddings": toml_values,
        },
    )


@given(st.one_of(_config_docs().map(_toml), st.text(max_size=200)))
@example("[network]\ntimeout = 'soon'\n")
@example("[network]\nparallel = -3\n")
@example("[network]\ntimeout = nan\n")
@example("[network]\ndeadline = inf\n")
def test_config_load_and_use(text: str | None) -> None:
    from ontoskills.commands._context import AppContext

    if text is None:
        return
    home = SANDBOX / "cfg-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8", errors="surrogatepass")
    app = AppContext(home_arg=str(home), cache_arg=str(SANDBOX / "cache"))
    cfg = _expect_ok_or_ours(lambda: app.config)
    if cfg is not None:
        opts = _expect_ok_or_ours(app.source_options)
        if opts is not None:
            assert opts.timeout > 0 and opts.retries >= 0 and opts.parallel >= 1
            assert math.isfinite(opts.timeout) and opts.deadline is not None
            assert 0 < opts.deadline.seconds <= 86400
        cfg.effective_registries()
