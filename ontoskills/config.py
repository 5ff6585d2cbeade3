"""User configuration: `$ONTOSKILLS_HOME/config.toml`.

[registries.ontostore]              # order of tables = resolution order
url = "https://github.com/mareasw/ontostore.git"
kind = "git"                        # http | folder | git; inferred when absent
trust = "official"                  # optional cap on tiers from this registry

[search]
mode = "auto"                       # auto | bm25 | semantic | hybrid
trust_weights = { official = 1.2, verified = 1.0, community = 0.8, local = 1.0 }

[embeddings]
model = "sentence-transformers/all-MiniLM-L6-v2"
revision = "<commit>"
path = "/opt/models/minilm"         # a local folder with model.onnx + tokenizer.json
threads = 1

[serve]
context_budget = 12000             # chars of one `ontoskill` answer (text + structured JSON)

[network]
timeout = 30                        # seconds per connect/read
retries = 4
parallel = 8
deadline = 90                       # total seconds of network work per command
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomli_w

from . import limits
from .errors import ConfigError
from .fsutil import atomic_write_text
from .manifest import TIERS
from .safety import is_valid_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_REGISTRY_NAME = "ontostore"
DEFAULT_REGISTRY_URL = "https://github.com/mareasw/ontostore.git"
KINDS = ("http", "folder", "git")
SEARCH_MODES = ("auto", "bm25", "semantic", "hybrid")
DEFAULT_TRUST_WEIGHTS = {"local": 1.0, "official": 1.2, "verified": 1.0, "community": 0.8}
# One `ontoskill` answer (text + structuredContent JSON), in characters: ~3k tokens by default.
# Below the minimum a long skill id plus page headers would not leave room for content.
DEFAULT_CONTEXT_BUDGET = 12_000
MIN_CONTEXT_BUDGET = 2_000
MAX_CONTEXT_BUDGET = 1_000_000
# A registry used without `registry add` (`--registry URL`, ONTOSKILLS_REGISTRY, or a lock
# naming one no longer configured) is capped here: a one-off index cannot call itself official.
ADHOC_TRUST = "community"


def same_location(a: str, b: str) -> bool:
    """Whether two registry URLs or paths name the same registry (paths: after symlinks)."""
    if "://" not in a and "@" not in a and "://" not in b and "@" not in b:
        return os.path.realpath(os.path.expanduser(a)) == os.path.realpath(os.path.expanduser(b))
    return a.rstrip("/") == b.rstrip("/")


@dataclass(frozen=True)
class RegistryConfig:
    name: str
    url: str
    kind: str
    trust: str | None = None

    def __post_init__(self) -> None:
        # Credentials in a URL would end up in the lockfile, config and error messages.
        parts = urlsplit(self.url) if "://" in self.url else None
        if parts is not None and (
            parts.password is not None
            or (parts.username is not None and parts.scheme in ("http", "https", "git+https"))
        ):
            raise ConfigError(
                f"registry {self.name}: the URL contains credentials",
                hint="remove them from the URL and set ONTOSKILLS_TOKEN (or GITHUB_TOKEN) instead",
            )

    def to_toml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url, "kind": self.kind}
        if self.trust:
            out["trust"] = self.trust
        return out


@dataclass
class Config:
    path: Path
    registries: list[RegistryConfig] = field(default_factory=list)
    search_mode: str = "auto"
    trust_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TRUST_WEIGHTS))
    embeddings: dict[str, Any] = field(default_factory=dict)
    network: dict[str, Any] = field(default_factory=dict)
    context_budget: int = DEFAULT_CONTEXT_BUDGET
    extra: dict[str, Any] = field(default_factory=dict)

    def registry(self, name: str) -> RegistryConfig | None:
        return next((r for r in self.registries if r.name == name), None)

    def effective_registries(self) -> list[RegistryConfig]:
        """Configured registries, or the public OntoStore when none is configured."""
        if self.registries:
            return list(self.registries)
        return [RegistryConfig(DEFAULT_REGISTRY_NAME, DEFAULT_REGISTRY_URL, "git")]

    def registry_at(self, url: str) -> RegistryConfig | None:
        """The configured registry at this location (the built-in OntoStore counts as one):
        its name and trust cap apply however it is named on the command line."""
        default = RegistryConfig(DEFAULT_REGISTRY_NAME, DEFAULT_REGISTRY_URL, "git")
        return next((r for r in [*self.registries, default] if same_location(r.url, url)), None)

    def to_toml(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.extra)
        if self.registries:
            data["registries"] = {r.name: r.to_toml() for r in self.registries}
        search: dict[str, Any] = {}
        if self.search_mode != "auto":
            search["mode"] = self.search_mode
        if self.trust_weights != DEFAULT_TRUST_WEIGHTS:
            search["trust_weights"] = dict(self.trust_weights)
        if search:
            data["search"] = search
        if self.embeddings:
            data["embeddings"] = dict(self.embeddings)
        if self.network:
            data["network"] = dict(self.network)
        serve = {k: v for k, v in data.pop("serve", {}).items() if k != "context_budget"}
        if self.context_budget != DEFAULT_CONTEXT_BUDGET:
            serve["context_budget"] = self.context_budget
        if serve:
            data["serve"] = serve
        return data

    def save(self) -> None:
        atomic_write_text(self.path, tomli_w.dumps(self.to_toml()))


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return value


# [network] key -> (type, minimum, maximum); checked at load so a typo is exit 2, not a
# traceback later. TOML has `inf` and `nan`: both are refused (nan compares False to any bound).
_NETWORK_NUMBERS: dict[str, tuple[type, float, float]] = {
    "timeout": (float, 0.001, 3600),
    "retries": (int, 0, 100),
    "parallel": (int, 1, 64),
    "deadline": (float, 0.001, 86400),
}


def _check_network(network: dict[str, Any], path: Path) -> None:
    for key, (kind, minimum, maximum) in _NETWORK_NUMBERS.items():
        if key not in network:
            continue
        value = network[key]
        ok_type = (int, float) if kind is float else int
        if (
            isinstance(value, bool)
            or not isinstance(value, ok_type)
            or not minimum <= value <= maximum
        ):
            raise ConfigError(
                f"{path}: network.{key} must be a number from {minimum:g} to {maximum:g}, "
                f"got {value!r}",
                hint="fix or delete the [network] table",
            )


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


def load_config(path: Path) -> Config:
    try:  # a FIFO or /dev/zero planted as config.toml must not hang or fill memory
        raw = limits.read_regular_file(
            path, limits.MAX_CONFIG_BYTES, what="config file", error=ConfigError
        )
    except FileNotFoundError:
        return Config(path=path)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})", hint="fix or delete the file") from None
    cfg = Config(path=path)
    for name, raw in _table(data, "registries", str(path)).items():
        if not is_valid_name(name):
            raise ConfigError(f"{path}: invalid registry name {name!r}")
        if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
            raise ConfigError(f"{path}: registries.{name} needs a string 'url'")
        kind = raw.get("kind")
        if kind is not None and kind not in KINDS:
            raise ConfigError(f"{path}: registries.{name}.kind must be one of {', '.join(KINDS)}")
        trust = raw.get("trust")
        if trust is not None and trust not in TIERS:
            raise ConfigError(f"{path}: registries.{name}.trust must be one of {', '.join(TIERS)}")
        from .sources import detect_kind  # local import: sources imports config types

        cfg.registries.append(
            RegistryConfig(name, raw["url"], kind or detect_kind(raw["url"]), trust)
        )
    search = _table(data, "search", str(path))
    mode = search.get("mode", "auto")
    if mode not in SEARCH_MODES:
        raise ConfigError(f"{path}: search.mode must be one of {', '.join(SEARCH_MODES)}")
    cfg.search_mode = mode
    weights = search.get("trust_weights", {})
    if not isinstance(weights, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in weights.values()
    ):
        raise ConfigError(f"{path}: search.trust_weights must map tiers to numbers >= 0")
    cfg.trust_weights = {**DEFAULT_TRUST_WEIGHTS, **{k: float(v) for k, v in weights.items()}}
    cfg.embeddings = _table(data, "embeddings", str(path))
    cfg.network = _table(data, "network", str(path))
    _check_network(cfg.network, path)
    serve = _table(data, "serve", str(path))
    if "context_budget" in serve:
        where = f"{path}: serve.context_budget"
        cfg.context_budget = check_context_budget(serve["context_budget"], where)
    cfg.extra = {
        k: v for k, v in data.items() if k not in ("registries", "search", "embeddings", "network")
    }
    return cfg
