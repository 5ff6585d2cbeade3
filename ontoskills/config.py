"""User configuration: `$ONTOSKILLS_HOME/config.toml`.

[registries.ontostore]              # order of tables = resolution order
url = "https://github.com/mareasw/ontostore.git"
kind = "git"                        # http | folder | git | skills; inferred when absent
trust = "official"                  # optional cap on tiers from this registry

[search]
mode = "auto"                       # auto | bm25 | semantic | hybrid
trust_weights = { official = 1.2, verified = 1.0, community = 0.8, local = 1.0 }

[embeddings]
model = "sentence-transformers/all-MiniLM-L6-v2"
revision = "<commit>"
path = "/opt/models/minilm"         # a local folder with model.onnx + tokenizer.json
threads = 1
pooling = "mean"                    # mean | cls (bge); the encoder's settings, not code:
query_prefix = ""                   # e5: "query: "   (put before every search query)
passage_prefix = ""                 # e5: "passage: " (before every intent / description)
max_tokens = 128                    # tokens read per text
dimension = 384                     # optional: refuse a model of another size

[serve]
context_budget = 12000             # chars of one `ontoskill` answer (text + structured JSON)
watch_interval = 2                  # seconds between checks for installs (list_changed); 0: off

[network]
timeout = 30                        # seconds per connect/read
retries = 4
parallel = 8
deadline = 90                       # total seconds of network work per command
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import tomli_w

from . import envvars, limits, tomlio
from .choices import Choice
from .errors import ConfigError
from .fsutil import atomic_write_through
from .manifest import LOCAL_TIER, Tier
from .registries import RegistryConfig, RegistryKind, detect_kind, same_location
from .safety import is_valid_name
from .tables import Table

DEFAULT_REGISTRY_NAME = "ontostore"
DEFAULT_REGISTRY_URL = "https://github.com/mareasw/ontostore.git"
DEFAULT_TRUST_WEIGHTS = {LOCAL_TIER: 1.0, "official": 1.2, "verified": 1.0, "community": 0.8}
# One `ontoskill` answer (text + structuredContent JSON), in characters: ~3k tokens by default.
# Below the minimum a long skill id plus page headers would not leave room for content.
DEFAULT_CONTEXT_BUDGET = 12_000
MIN_CONTEXT_BUDGET = 2_000
MAX_CONTEXT_BUDGET = 1_000_000
# Concurrent GET event streams of `serve --transport http` (docs/SERVER.md): each costs ~57 KB
# on top of its session's ~38 KB, and a connection (a file descriptor) for as long as it is
# open; the default stays well under a 1,024-descriptor `ulimit -n`.
DEFAULT_MAX_STREAMS = 256
MAX_MAX_STREAMS = 100_000
# A registry used without `registry add` (`--registry URL`, ONTOSKILLS_REGISTRY, or a lock
# naming one no longer configured) is capped here: a one-off index cannot call itself official.
ADHOC_TRUST = Tier.COMMUNITY.value


class SearchMode(Choice):
    """`[search] mode`, `search --mode`, `serve --mode` (auto: hybrid when the model and
    vectors are installed, else bm25)."""

    AUTO = "auto"
    BM25 = "bm25"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


# ----------------------------------------------------------------------- typed tables
# Each table is parsed and checked once, here; a wrong value is exit 2 naming the key. Keys
# we do not know are kept (`extra`) and written back by `save()`, as are the keys the file
# set (`given`) even at their default value: `registry add` must not rewrite a user's file.


@dataclass
class _Table:
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    given: frozenset[str] = field(default_factory=frozenset, repr=False)

    def to_toml(self) -> dict[str, Any]:
        out = dict(self.extra)
        for f in fields(self):
            if f.name in ("extra", "given"):
                continue
            value = getattr(self, f.name)
            default = f.default_factory() if callable(f.default_factory) else f.default
            if value is not None and (f.name in self.given or value != default):
                out[f.name] = value.value if isinstance(value, Choice) else value
        return out


@dataclass
class SearchSettings(_Table):
    mode: SearchMode = SearchMode.AUTO
    # every tier's weight: the defaults with the file's values over them
    trust_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TRUST_WEIGHTS))


EMBEDDING_POOLINGS = ("mean", "cls")
MAX_PREFIX_CHARS = 64


@dataclass
class EmbeddingsSettings(_Table):
    model: str | None = None  # hub repository id (default: embeddings' pinned MiniLM)
    revision: str | None = None  # hub commit (default: the pinned one)
    path: str | None = None  # a local folder with model.onnx + tokenizer.json (`model_path`)
    threads: int | None = None  # ONNX Runtime threads (else ONTOSKILLS_ENCODER_THREADS)
    # The encoder's settings (embeddings/encoder.py): part of the model identity, so a
    # change re-derives the vectors it applies to (docs/EMBEDDINGS.md "Another encoder").
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    max_tokens: int = 128
    dimension: int | None = None

    def encoder_settings(self) -> str:
        """What of these settings changes the vectors, as one stable string."""
        return (
            f"pooling={self.pooling};query={self.query_prefix!r};"
            f"passage={self.passage_prefix!r};max_tokens={self.max_tokens}"
        )

    def to_toml(self) -> dict[str, Any]:
        out = super().to_toml()
        if "model_path" in self.given and "path" in out:  # written back as the user spelled it
            out["model_path"] = out.pop("path")
        return out


@dataclass
class NetworkSettings(_Table):
    timeout: float = 30.0  # seconds per connect/read
    retries: int = 4
    parallel: int = 8
    deadline: float = float(envvars.VARS[envvars.NETWORK_DEADLINE].default)
    allow_insecure_http: bool = False


@dataclass
class ServeSettings(_Table):
    context_budget: int = DEFAULT_CONTEXT_BUDGET  # chars of one `ontoskill` answer
    max_streams: int = DEFAULT_MAX_STREAMS  # concurrent GET event streams (http transport)
    watch_interval: float = 2.0  # seconds between list-change polls (server/changes.py); 0: off


@dataclass
class Config:
    path: Path
    registries: list[RegistryConfig] = field(default_factory=list)
    search: SearchSettings = field(default_factory=SearchSettings)
    embeddings: EmbeddingsSettings = field(default_factory=EmbeddingsSettings)
    network: NetworkSettings = field(default_factory=NetworkSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level tables, kept
    # Refuse unsigned registries (docs/SECURITY.md); the built-in OntoStore gets a notice.
    require_signed: bool = False

    def registry(self, name: str) -> RegistryConfig | None:
        return next((r for r in self.registries if r.name == name), None)

    def effective_registries(self) -> list[RegistryConfig]:
        """Configured registries, or the public OntoStore when none is configured."""
        if self.registries:
            return list(self.registries)
        return [default_registry()]

    def registry_at(self, url: str) -> RegistryConfig | None:
        """The configured registry at this location (the built-in OntoStore counts as one):
        its name and trust cap apply however it is named on the command line."""
        candidates = [*self.registries, default_registry()]
        return next((r for r in candidates if same_location(r.url, url)), None)

    def to_toml(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.extra)
        if self.require_signed:
            data["require_signed"] = True
        if self.registries:
            data["registries"] = {r.name: r.to_toml() for r in self.registries}
        for name in ("search", "embeddings", "network", "serve"):
            table = getattr(self, name).to_toml()
            if table:
                data[name] = table
        return data

    def save(self) -> None:
        # the user's file: a symlinked config.toml (dotfiles) is written through, kept a link
        atomic_write_through(self.path, tomli_w.dumps(self.to_toml()).encode("utf-8"))


def default_registry() -> RegistryConfig:
    return RegistryConfig(DEFAULT_REGISTRY_NAME, DEFAULT_REGISTRY_URL, RegistryKind.GIT)


# ---------------------------------------------------------------------------- parsing
def _section(top: Table, name: str) -> Table:
    """A top-level `[name]` table ({} when absent); its values' errors hint at fixing it."""
    raw = top.data.get(name, {})
    if not isinstance(raw, dict):
        top.fail(f"[{name}] must be a table")
    return Table(raw, top.source, ConfigError, path=name, hint=f"fix or delete the [{name}] table")


def _text(t: Table, key: str) -> str | None:
    return t.get(key, str) or None  # an empty string means unset, as before


def _known(table: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in table.items() if k not in keys}


def _registries(top: Table) -> list[RegistryConfig]:
    out = []
    for name, raw in _section(top, "registries").data.items():
        if not is_valid_name(name):
            top.fail(f"invalid registry name {name!r}")
        if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
            top.fail(f"registries.{name} needs a string 'url'")
        t = Table(raw, top.source, ConfigError, path=f"registries.{name}")
        kind = t.choice("kind", RegistryKind) if raw.get("kind") is not None else None
        trust = t.choice("trust", Tier) if raw.get("trust") is not None else None
        out.append(
            RegistryConfig(
                name,
                raw["url"],
                kind or detect_kind(raw["url"]),
                None if trust is None else str(trust),
                _text(t, "root"),
                _text(t, "package_id"),
            )
        )
    return out


def _search(top: Table) -> SearchSettings:
    t = _section(top, "search")
    table = t.data
    mode = t.choice("mode", SearchMode)
    weights = table.get("trust_weights", {})
    if not isinstance(weights, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        for v in weights.values()
    ):
        t.fail("must map tiers to numbers >= 0", "trust_weights")
    keys = ("mode", "trust_weights")
    return SearchSettings(
        mode=SearchMode(mode or SearchMode.AUTO),
        trust_weights={**DEFAULT_TRUST_WEIGHTS, **{k: float(v) for k, v in weights.items()}},
        extra=_known(table, keys),
        given=frozenset(k for k in keys if k in table),
    )


ENCODER_KEYS = ("pooling", "query_prefix", "passage_prefix", "max_tokens", "dimension")


def encoder_values(t: Table, keys: tuple[str, ...] = ENCODER_KEYS) -> dict[str, Any]:
    """The encoder settings among `keys` that `t` sets, checked: the one validator of
    config.toml's `[embeddings]` and a project manifest's (project.py), so both refuse the
    same values with the same words. Keys `t` does not set are absent from the result."""
    out: dict[str, Any] = {}
    for key in (k for k in ENCODER_KEYS if k in keys and t.has(k)):
        if key in ("max_tokens", "dimension"):
            low = 8 if key == "max_tokens" else 1
            out[key] = int(t.number(key, integer=True, low=low, high=8192) or 0)
        elif key == "pooling":
            pooling = _text(t, "pooling")
            if pooling is not None and pooling not in EMBEDDING_POOLINGS:
                t.fail(f"must be one of {', '.join(EMBEDDING_POOLINGS)}", "pooling")
            if pooling is not None:
                out[key] = pooling
        else:  # a prefix: text the encoder puts before every query or passage
            v = t.get(key, str, "")
            if len(v) > MAX_PREFIX_CHARS or not v.isprintable():
                t.fail(f"must be printable text of at most {MAX_PREFIX_CHARS} characters", key)
            out[key] = v
    return out


def _embeddings(top: Table) -> EmbeddingsSettings:
    t = _section(top, "embeddings")
    table = t.data
    threads = t.number("threads", integer=True, low=1, high=256)
    keys = ("model", "revision", "path", "model_path", "threads", *ENCODER_KEYS)
    return EmbeddingsSettings(
        model=_text(t, "model"),
        revision=_text(t, "revision"),
        # `model_path` is the older spelling of `path`; `path` wins when both are set
        path=_text(t, "path") or _text(t, "model_path"),
        threads=None if threads is None else int(threads),
        **encoder_values(t),  # unset keys keep the dataclass's defaults
        extra=_known(table, keys),
        given=frozenset(k for k in keys if k in table),
    )


# [network] key -> (integer, minimum, maximum): a typo is exit 2 here, not a traceback later.
_NETWORK_NUMBERS: dict[str, tuple[bool, float, float]] = {
    "timeout": (False, 0.001, 3600),
    "retries": (True, 0, 100),
    "parallel": (True, 1, 64),
    "deadline": (False, 0.001, 86400),
}


def _network(top: Table) -> NetworkSettings:
    t = _section(top, "network")
    table = t.data
    settings = NetworkSettings(
        extra=_known(table, (*_NETWORK_NUMBERS, "allow_insecure_http")),
        given=frozenset(k for k in (*_NETWORK_NUMBERS, "allow_insecure_http") if k in table),
    )
    for key, (integer, low, high) in _NETWORK_NUMBERS.items():
        value = t.number(key, integer=integer, low=low, high=high)
        if value is not None:
            setattr(settings, key, value)
    # "false" is a string, and strings are true: a bool or nothing
    settings.allow_insecure_http = t.get("allow_insecure_http", bool, False) or False
    return settings


def check_context_budget(value: object, where: str) -> int:
    """A budget in characters, or ConfigError naming `where` (a flag or a config key)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not MIN_CONTEXT_BUDGET <= value <= MAX_CONTEXT_BUDGET
    ):
        raise ConfigError(
            f"{where} must be an integer from {MIN_CONTEXT_BUDGET:,} to "
            f"{MAX_CONTEXT_BUDGET:,} characters, got {value!r}",
            hint=f"the default is {DEFAULT_CONTEXT_BUDGET} (about 3,000 tokens)",
        )
    return value


def _serve(top: Table) -> ServeSettings:
    path = top.source
    table = _section(top, "serve").data
    keys = ("context_budget", "max_streams", "watch_interval")
    settings = ServeSettings(
        extra=_known(table, keys), given=frozenset(k for k in keys if k in table)
    )
    if "context_budget" in table:
        where = f"{path}: serve.context_budget"
        settings.context_budget = check_context_budget(table["context_budget"], where)
    if "max_streams" in table:
        value = table["max_streams"]
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= MAX_MAX_STREAMS
        ):
            raise ConfigError(
                f"{path}: serve.max_streams must be an integer from 0 to {MAX_MAX_STREAMS:,}, "
                f"got {value!r}",
                hint=f"concurrent GET event streams of `serve --transport http`; the default "
                f"is {DEFAULT_MAX_STREAMS}",
            )
        settings.max_streams = value
    if "watch_interval" in table:
        value = table["watch_interval"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
            raise ConfigError(
                f"{path}: serve.watch_interval must be a number of seconds from 0 to 3600, "
                f"got {value!r}",
                hint="how often `serve` checks the lock for installs to tell clients about "
                "(0 turns it off); the default is 2",
            )
        settings.watch_interval = float(value)
    return settings


TABLES = ("registries", "search", "embeddings", "network", "serve")


def load_config(path: Path) -> Config:
    try:  # a FIFO or /dev/zero planted as config.toml must not hang or fill memory
        raw = limits.read_regular_file(
            path, limits.MAX_CONFIG_BYTES, what="config file", error=ConfigError
        )
    except FileNotFoundError:
        return Config(path=path)
    data = tomlio.loads(  # bounded; every parser failure is exit 2
        raw,
        source=str(path),
        error=ConfigError,
        max_bytes=limits.MAX_CONFIG_BYTES,
        hint="fix or delete the file",
    )
    top = Table(data, str(path), ConfigError)
    return Config(
        path=path,
        registries=_registries(top),
        search=_search(top),
        embeddings=_embeddings(top),
        network=_network(top),
        serve=_serve(top),
        extra={k: v for k, v in data.items() if k not in (*TABLES, "require_signed")},
        require_signed=_require_signed(data, path),
    )


def _require_signed(data: dict[str, Any], path: Path) -> bool:
    value = data.get("require_signed", False)
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: require_signed must be true or false, got {value!r}")
    return value
