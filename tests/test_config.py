"""config.toml: every table parsed into typed settings once (config.py), wrong values refused
with exit 2 naming the key, and what a user wrote kept when the file is saved again.

The divergences these tests pin (each failed on the code before issue 14 item 4):
- `[embeddings] path = 5` was "5" to the model loader but ignored by search's encoder lookup;
- `[network] allow_insecure_http = "false"` (a string) switched plain HTTP *on*;
- `[embeddings] threads = 0` / `"4"` were silently ignored;
- `serve --min-trust local` started a server while `search --min-trust local` was refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ontoskills.catalog.verify import VerifyMode
from ontoskills.commands._context import AppContext
from ontoskills.config import (
    DEFAULT_TRUST_WEIGHTS,
    Config,
    SearchMode,
    load_config,
)
from ontoskills.errors import EXIT_USAGE, ConfigError
from ontoskills.manifest import Tier
from ontoskills.registries import RegistryConfig, RegistryKind
from tests.conftest import CliRunner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def _refused(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    assert info.value.exit_code == EXIT_USAGE
    return info.value


def test_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    cfg = load_config(tmp_path / "none.toml")
    assert cfg.search.mode == SearchMode.AUTO
    assert cfg.search.trust_weights == DEFAULT_TRUST_WEIGHTS
    assert (cfg.network.timeout, cfg.network.retries, cfg.network.parallel) == (30.0, 4, 8)
    assert cfg.network.deadline == 90 and cfg.network.allow_insecure_http is False
    assert (cfg.embeddings.path, cfg.embeddings.model, cfg.embeddings.threads) == (None,) * 3
    assert cfg.to_toml() == {}


def test_tables_are_typed(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        '[search]\nmode = "bm25"\ntrust_weights = { community = 0.5 }\n'
        '[embeddings]\nmodel = "org/m"\nrevision = "abc"\npath = "/opt/m"\nthreads = 3\n'
        "[network]\ntimeout = 2.5\nretries = 0\nparallel = 2\ndeadline = 10\n"
        "allow_insecure_http = true\n"
        "[serve]\ncontext_budget = 4000\n",
    )
    assert cfg.search.mode is SearchMode.BM25
    assert cfg.search.trust_weights == {**DEFAULT_TRUST_WEIGHTS, "community": 0.5}
    emb = cfg.embeddings
    assert (emb.model, emb.revision, emb.path, emb.threads) == ("org/m", "abc", "/opt/m", 3)
    net = cfg.network
    assert (net.timeout, net.retries, net.parallel, net.deadline) == (2.5, 0, 2, 10)
    assert net.allow_insecure_http is True
    assert cfg.serve.context_budget == 4000
    app = AppContext(home_arg=str(tmp_path), cache_arg=str(tmp_path / "c"), _config=cfg)
    source = app.source_options()  # reads the typed settings: no .get() with a default
    assert (source.timeout, source.retries, source.parallel) == (2.5, 0, 2)
    assert source.allow_insecure_http is True and source.deadline is not None
    assert source.deadline.seconds == 10


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[search]\nmode = "fuzzy"', "search.mode must be one of auto, bm25, semantic, hybrid"),
        ("[search]\ntrust_weights = { official = -1 }", "search.trust_weights"),
        ("[search]\ntrust_weights = { official = nan }", "search.trust_weights"),
        ("[embeddings]\npath = 5", "embeddings.path must be a string"),
        ("[embeddings]\nmodel_path = true", "embeddings.model_path must be a string"),
        ("[embeddings]\nmodel = [1]", "embeddings.model must be a string"),
        ("[embeddings]\nthreads = 0", "embeddings.threads must be a number from 1 to 256"),
        ('[embeddings]\nthreads = "4"', "embeddings.threads must be a number"),
        ("[embeddings]\nthreads = 2.5", "embeddings.threads must be a number"),
        ('[network]\nallow_insecure_http = "false"', "network.allow_insecure_http must be"),
        ("[network]\nallow_insecure_http = 1", "network.allow_insecure_http must be"),
        ("[network]\nretries = 2.5", "network.retries must be a number"),
        ('[registries.x]\nurl = "/r"\nkind = "zip"', "registries.x.kind must be one of"),
        ('[registries.x]\nurl = "/r"\ntrust = "gold"', "registries.x.trust must be one of"),
        ("[serve]\ncontext_budget = 10", "serve.context_budget"),
        ("embeddings = 3", "[embeddings] must be a table"),
    ],
)
def test_a_wrong_value_is_exit_2_naming_the_key(tmp_path: Path, text: str, needle: str) -> None:
    err = _refused(tmp_path, text + "\n")
    assert needle in err.message, err.message
    assert str(tmp_path / "config.toml") in err.message


def test_insecure_http_as_a_string_no_longer_turns_it_on(tmp_path: Path) -> None:
    """Before: `bool("false")` is True, so this line allowed plain-http registries."""
    (tmp_path / "config.toml").write_text('[network]\nallow_insecure_http = "false"\n')
    app = AppContext(home_arg=str(tmp_path), cache_arg=str(tmp_path / "c"))
    with pytest.raises(ConfigError):
        app.source_options()


def test_embeddings_path_is_one_value_for_every_reader(tmp_path: Path) -> None:
    """The model loader and search's encoder fingerprint read the same typed `path`
    (`model_path` is its older spelling); a number there is refused, not read two ways."""
    from ontoskills.embeddings.model import model_identity
    from ontoskills.paths import Home

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"x")
    (folder / "tokenizer.json").write_bytes(b"{}")
    cfg = _load(tmp_path, f'[embeddings]\nmodel_path = "{folder}"\n')
    assert cfg.embeddings.path == str(folder)
    assert str(folder / "model.onnx") in model_identity(Home(tmp_path / "home"), cfg)
    both = _load(tmp_path, f'[embeddings]\npath = "{folder}"\nmodel_path = "/elsewhere"\n')
    assert both.embeddings.path == str(folder)  # `path` wins
    _refused(tmp_path, "[embeddings]\npath = 5\n")


def test_save_keeps_what_the_user_wrote(tmp_path: Path) -> None:
    """`registry add` rewrites config.toml: unknown keys, keys set to their default value and
    the older `model_path` spelling all survive, and nothing unset appears."""
    text = (
        '[search]\nmode = "auto"\nfuture = 1\n'
        '[embeddings]\nmodel_path = "/opt/m"\nnote = "mine"\n'
        '[network]\ntimeout = 30\nproxy = "p"\n'
        "[serve]\nother = 1\n"
        "[mystery]\nx = 2\n"
    )
    cfg = _load(tmp_path, text)
    cfg.registries.append(RegistryConfig("corp", "/r", RegistryKind.FOLDER, Tier.VERIFIED.value))
    cfg.network.retries = 2  # a changed value is written even though the file lacked it
    cfg.save()
    saved = tomllib.loads((tmp_path / "config.toml").read_text())
    assert saved == {
        "search": {"mode": "auto", "future": 1},
        "embeddings": {"model_path": "/opt/m", "note": "mine"},
        "network": {"timeout": 30, "retries": 2, "proxy": "p"},
        "serve": {"other": 1},
        "mystery": {"x": 2},
        "registries": {"corp": {"url": "/r", "kind": "folder", "trust": "verified"}},
    }
    again = load_config(tmp_path / "config.toml")
    assert again.registries == cfg.registries and again.network.retries == 2


def test_choices_are_strings_everywhere() -> None:
    """Members compare, format and hash as their value: locks, JSON and messages never see
    `SearchMode.BM25`."""
    assert SearchMode.BM25 == "bm25" and f"{SearchMode.BM25}" == "bm25"
    assert {"full": 1}[VerifyMode.FULL] == 1
    assert Tier.values() == ("community", "verified", "official")
    assert Tier.get("local") is None and Tier.get(3) is None
    assert RegistryKind.get("git") is RegistryKind.GIT


@pytest.mark.parametrize(
    ("args", "flag", "choices"),
    [
        (("search", "x", "--mode", "magic"), "--mode", SearchMode),
        (("search", "x", "--min-trust", "local"), "--min-trust", Tier),
        (("serve", "--min-trust", "local"), "--min-trust", Tier),
        (("serve", "--verify", "sometimes"), "--verify", VerifyMode),
        (("show", "a/b/c", "--verify", "slow"), "--verify", VerifyMode),
        (("install", "--min-trust", "gold", "a/b"), "--min-trust", Tier),
        (("registry", "add", "r", "/tmp", "--kind", "zip"), "--kind", RegistryKind),
        (("registry", "add", "r", "/tmp", "--trust", "gold"), "--trust", Tier),
    ],
)
def test_flags_take_exactly_their_enum(
    cli: CliRunner, args: tuple[str, ...], flag: str, choices: type[Tier]
) -> None:
    """One set of words per concept, refused the same way by every verb (`serve` used to
    accept `--min-trust local`, which `search` refused)."""
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    quoted = ", ".join(f"'{v}'" for v in choices.values())
    assert f"invalid value for '{flag}'" in proc.stderr and quoted in proc.stderr
    assert "Value error" not in proc.stderr and proc.stdout == ""
