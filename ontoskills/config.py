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

[network]
timeout = 30
retries = 4
parallel = 8
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomli_w

from .errors import ConfigError
from .fsutil import atomic_write_through
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
    extra: dict[str, Any] = field(default_factory=dict)

    def registry(self, name: str) -> RegistryConfig | None:
        return next((r for r in self.registries if r.name == name), None)

    def effective_registries(self) -> list[RegistryConfig]:
        """Configured registries, or the public OntoStore when none is configured."""
        if self.registries:
            return list(self.registries)
        return [RegistryConfig(DEFAULT_REGISTRY_NAME, DEFAULT_REGISTRY_URL, "git")]

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
        return data

    def save(self) -> None:
        # the user's file: a symlinked config.toml (dotfiles) is written through, kept a link
        atomic_write_through(self.path, tomli_w.dumps(self.to_toml()).encode("utf-8"))


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return value


# [network] key -> (type, minimum); checked at load so a typo is exit 2, not a traceback later.
_NETWORK_NUMBERS: dict[str, tuple[type, float]] = {
    "timeout": (float, 0.001),
    "retries": (int, 0),
    "parallel": (int, 1),
}


def _check_network(network: dict[str, Any], path: Path) -> None:
    for key, (kind, minimum) in _NETWORK_NUMBERS.items():
        if key not in network:
            continue
        value = network[key]
        ok_type = (int, float) if kind is float else int
        if isinstance(value, bool) or not isinstance(value, ok_type) or value < minimum:
            raise ConfigError(
                f"{path}: network.{key} must be a number >= {minimum:g}, got {value!r}",
                hint="fix or delete the [network] table",
            )


def load_config(path: Path) -> Config:
    if not path.exists():
        return Config(path=path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
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
    cfg.extra = {
        k: v for k, v in data.items() if k not in ("registries", "search", "embeddings", "network")
    }
    return cfg
