"""Issue 13 class 5: bounded work for every input (parsers and files we are pointed at).

JSON is bounded after decompression by bytes and by the number of values it would build;
`intents.json` by vectors, dimension and total floats; the lockfile and config.toml must be
regular files under a size limit, so a FIFO or /dev/zero neither hangs nor fills memory.
Memory figures for the accepted worst cases are in benchmarks/fuzz.py (`--bounds`).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from ontoskills import jsonio, limits
from ontoskills.errors import ConfigError, LimitExceededError, LockFormatError
from ontoskills.intents import parse_intents
from tests.conftest import CliRunner
from tests.hardening.conftest import seed_home
from tests.hardening.hostile_check import check_case, home_view
from tests.helpers.faults import Fault, FaultServer
from tests.helpers.hostile import EVIL, EVIL_ROOT, Case, build_hostile, write_raw
from tests.helpers.tinymodel import build_tiny_model

# ------------------------------------------------------------------ jsonio value budget


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


SHAPES = {
    "empty objects": lambda n: "[" + ",".join(["{}"] * n) + "]",
    "empty arrays": lambda n: "[" + ",".join(["[]"] * n) + "]",
    "zeros": lambda n: "[" + ",".join(["0"] * n) + "]",
    "members": lambda n: "{" + ",".join(f'"k{i}":0' for i in range(n // 3)) + "}",
    "nested pairs": lambda n: "[" + ",".join(['{"a":[1]}'] * (n // 4)) + "]",
}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("kind", [bytes, str])
def test_json_over_the_value_budget_is_refused_before_parsing(shape, kind) -> None:  # type: ignore[no-untyped-def]
    text = shape(1500)
    data = text.encode() if kind is bytes else text
    with pytest.raises(LimitExceededError, match="more than 1000 JSON values"):
        jsonio.loads(data, source="hostile.json", max_items=1000)
    assert jsonio.loads(data, source="ok.json", max_items=5000) is not None


def test_punctuation_inside_strings_does_not_count() -> None:
    """Descriptions full of commas and colons: the bound is recounted without strings."""
    doc = {"description": "a, b: c, " * 50_000, "escaped": 'q\\", [x]: {y}, ' * 1000}
    data = json.dumps(doc).encode()
    assert jsonio._items_upper_bound(data) > 1000  # the fast count would refuse it
    assert jsonio.loads(data, source="prose.json", max_items=10) == doc


def test_many_short_strings_are_refused_without_a_per_string_pass() -> None:
    """`["a","a",...]`: the quote count alone proves it is over the budget."""
    data = b"[" + b'"a",' * 5000 + b'"a"]'
    with pytest.raises(LimitExceededError):
        jsonio.loads(data, source="strings.json", max_items=1000)
    # escaped quotes never make the string count an overestimate
    doc = ['say \\"hi\\", [then] {go}: ' * 20] * 40
    assert jsonio.loads(json.dumps(doc), source="quotes.json", max_items=45) == doc


def test_default_budgets_fit_real_registries_and_refuse_bombs() -> None:
    # 3 bytes per dict: 3 MB of `{},` was ~64 MB of dicts; now refused at the default budget
    bomb = b'{"packages": [' + b"{}," * limits.MAX_JSON_ITEMS + b"{}]}"
    with pytest.raises(LimitExceededError):
        jsonio.loads(bomb, source="manifest")
    entry = {"package_id": "a/b", "trust_tier": "official", "manifest_path": "p/a/b/package.json"}
    index = json.dumps({"packages": [entry] * 100_000}).encode()  # like benchmarks/growth.py
    assert len(jsonio.loads(index, source="index", max_items=limits.MAX_INDEX_ITEMS)["packages"])


def _gzip_index_bomb(values: int) -> bytes:
    return gzip.compress(b'{"packages": [' + b"{}," * values + b"{}]}", 9)


def test_gzip_json_bomb_over_http_is_refused_after_decompression(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """~15 KB on the wire, 12 MB of JSON and 4 M dicts (~260 MB) once parsed: refused from
    the decoded bytes before the parser builds anything."""
    body = _gzip_index_bomb(limits.MAX_INDEX_ITEMS + 1)
    assert len(body) < 64 * 1024
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.fail(
            r"^/index\.json$",
            Fault("raw", status=200, headers={"Content-Encoding": "gzip"}, body=body),
            times=None,
        )
        proc = cli("--registry", srv.url, "install", EVIL)
    assert proc.returncode == 4, proc.stderr
    assert "index.json: more than" in proc.stderr and "JSON values" in proc.stderr


def test_gzip_manifest_bomb_over_http_leaves_the_home_untouched(
    cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    body = gzip.compress(b'{"package_id": "evil/pkg", "x": [' + b"[]," * 2_000_000 + b"[]]}", 9)
    reg = build_hostile(tmp_path / "reg")
    with FaultServer(reg) as srv:
        srv.fail(
            r"evil/pkg/package\.json$",
            Fault("raw", status=200, headers={"Content-Encoding": "gzip"}, body=body),
            times=None,
        )
        check_case(Case("manifest-bomb", 4, stderr_has="JSON values"), cli, tmp_path, srv.url, env)


# ------------------------------------------------------------------ intents.json bounds


def _intents(vectors: int, dimension: int, declared: int | None = None) -> bytes:
    row = "[" + ",".join(["0.5"] * dimension) + "]"
    items = ",".join(
        f'{{"intent":"i{i}","embedding":{row},"skills":["s"]}}' for i in range(vectors)
    )
    return f'{{"model":"m","dimension":{declared or dimension},"intents":[{items}]}}'.encode()


@pytest.mark.parametrize(
    ("vectors", "dimension", "message"),
    [
        (1, limits.MAX_INTENT_DIMENSION + 1, "dimension 4097 outside"),
        (limits.MAX_INTENT_VECTORS + 1, 1, "intent vectors, over"),
        (530, 4000, "530 x 4000 floats, over"),
    ],
)
def test_intents_vectors_are_bounded(vectors: int, dimension: int, message: str) -> None:
    with pytest.raises(LimitExceededError, match=message):
        parse_intents(_intents(vectors, dimension), source="intents.json")


def test_intents_counts_are_checked_before_any_vector_is_converted() -> None:
    """A dimension that matches no row is refused on the count alone (no float work)."""
    data = _intents(limits.MAX_INTENT_VECTORS + 1, 1, declared=2)
    with pytest.raises(LimitExceededError):
        parse_intents(data, source="intents.json")
    real = parse_intents(_intents(14, 384), source="intents.json")  # what the store ships
    assert len(real.intents) == 14 and real.dimension == 384


def test_install_refuses_intents_over_the_bounds(
    cli: CliRunner, tmp_path: Path, baseline: Path, env: dict[str, str]
) -> None:
    seed_home(baseline, env)
    (tmp_path / "outside").mkdir()
    model = build_tiny_model(tmp_path / "model")
    reg = build_hostile(
        tmp_path / "reg", mutate=write_raw(f"{EVIL_ROOT}/tool/intents.json", _intents(1, 5000))
    )
    case = Case(
        "intents-dimension",
        4,
        args=("--with-embeddings", "--model", str(model)),
        stderr_has="dimension 5000 outside 1..4096",
    )
    check_case(case, cli, tmp_path, reg, env)


# ------------------------------------------------------------------ files we are pointed at


def _lockfile_cases(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "lock.fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "lockdir"
    folder.mkdir()
    big = tmp_path / "big.lock"
    with open(big, "wb") as fh:  # sparse: no disk used
        fh.truncate(limits.MAX_LOCKFILE_BYTES + 1)
    return {"fifo": fifo, "dev-zero": Path("/dev/zero"), "folder": folder, "oversize": big}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "oversize"])
@pytest.mark.parametrize("command", [("list",), ("search", "x"), ("install", EVIL)])
def test_lockfile_must_be_a_regular_file_under_the_limit(
    cli: CliRunner, tmp_path: Path, env: dict[str, str], kind: str, command: tuple[str, ...]
) -> None:
    if kind == "dev-zero" and not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    target = _lockfile_cases(tmp_path)[kind]
    reg = build_hostile(tmp_path / "reg")
    args = ("--registry", str(reg), *command) if command[0] == "install" else command
    # a FIFO nobody writes would block open(); the timeout only guards the test run
    proc = cli("--lockfile", str(target), *args, timeout=60)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert "lockfile" in proc.stderr and "Traceback" not in proc.stderr
    assert ("not a regular file" in proc.stderr) or ("over the" in proc.stderr)
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies/author").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "oversize"])
def test_config_must_be_a_regular_file_under_the_limit(
    cli: CliRunner, tmp_path: Path, env: dict[str, str], kind: str
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True)
    config = home / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "dev-zero":
        config.symlink_to("/dev/zero")
    else:
        config.write_bytes(b"#" * (limits.MAX_CONFIG_BYTES + 1))
    before = home_view(home)
    proc = cli("list", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "config file" in proc.stderr and "Traceback" not in proc.stderr
    assert home_view(home) == before


def test_read_regular_file_unit(tmp_path: Path) -> None:
    good = tmp_path / "a.toml"
    good.write_bytes(b"x = 1\n")
    assert limits.read_regular_file(good, 10, what="config file", error=ConfigError) == b"x = 1\n"
    with pytest.raises(ConfigError, match="over the 3 limit"):
        limits.read_regular_file(good, 3, what="config file", error=ConfigError)
    with pytest.raises(FileNotFoundError):
        limits.read_regular_file(tmp_path / "absent", 10, what="lockfile", error=LockFormatError)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(LockFormatError, match="not a regular file"):
        limits.read_regular_file(fifo, 10, what="lockfile", error=LockFormatError)
