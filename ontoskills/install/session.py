"""Everything one install-side operation needs: home, cache, config, registries, sources."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ADHOC_TRUST, Config, default_registry
from ..errors import ConfigError, LockFormatError, NotFoundError, OntoskillsError, UsageError
from ..lockfile import LockedRegistry, Lockfile
from ..lockfile import load as load_lock
from ..manifest import IndexEntry
from ..paths import Cache, Home, expand_user
from ..progress import NullReporter, Reporter
from ..registries import RegistryConfig, detect_kind, same_location, slug_for_url
from ..signing.gate import Expectation, Opened, open_registry
from ..sources import BaseSource, IndexSnapshot, SourceOptions, open_source
from ..sources.sparse import open_sparse


def adhoc_location(value: str) -> str:
    """A `--registry` value that names no registry: a URL as it is, a path made absolute
    (exit 2 when it does not exist). commands/_project.py declares the same location."""
    if "://" in value or "@" in value:
        return value
    path = expand_user(value)
    if not path.exists():
        raise UsageError(
            f"registry {value!r} is neither a configured name nor an existing path",
            hint="see `ontoskills registry list`, or pass a URL",
        )
    return str(path.absolute())


@dataclass
class Session:
    home: Home
    cache: Cache
    config: Config
    lockfile_path: Path
    options: SourceOptions
    reporter: Reporter = field(default_factory=NullReporter)
    registry_override: str | None = None
    require_signed: bool = False  # --require-signed (config.require_signed applies too)
    _opened: dict[str, Opened] = field(default_factory=dict, repr=False)
    _lock: Lockfile | None = field(default=None, repr=False)
    _sources: dict[tuple[str, str | None], BaseSource] = field(default_factory=dict, repr=False)
    _snapshots: dict[tuple[str, str | None], IndexSnapshot] = field(
        default_factory=dict, repr=False
    )

    # registries -------------------------------------------------------------------
    def registries(self) -> list[RegistryConfig]:
        """Where to resolve new packages: --registry/ONTOSKILLS_REGISTRY, else the config."""
        if self.registry_override:
            return [self.adhoc_registry(self.registry_override)]
        return self.config.effective_registries()

    def adhoc_registry(self, value: str) -> RegistryConfig:
        """--registry NAME|URL|PATH: a configured registry keeps its name and trust cap; any
        other location is capped at community (config.ADHOC_TRUST, docs/CLI.md)."""
        named = self.config.registry(value)
        if named is not None:
            return named
        value = adhoc_location(value)
        known = self.config.registry_at(value)
        if known is not None:
            return known
        return RegistryConfig(slug_for_url(value), value, detect_kind(value), ADHOC_TRUST)

    def registry_for_lock(self, locked: LockedRegistry) -> RegistryConfig:
        """The registry a locked package came from, with the trust cap it has now: its
        configured one, else the ad-hoc cap (a lock cannot lift it)."""
        if self.registry_override:
            # `--registry MIRROR ci`: the locked files are read from there (an air-gapped
            # mirror, install/mirror.py); the lock's hashes still pin every byte.
            there = self.adhoc_registry(self.registry_override)
            return RegistryConfig(locked.name, there.url, there.kind, there.trust, there.root)
        configured = self.config.registry(locked.name)
        if configured is None or not same_location(configured.url, locked.url):
            configured = self.config.registry_at(locked.url)
        trust = configured.trust if configured is not None else ADHOC_TRUST
        root = configured.root if configured is not None else None
        package_id = configured.package_id if configured is not None else None
        try:
            return RegistryConfig(locked.name, locked.url, locked.kind, trust, root, package_id)
        except ConfigError as exc:  # credentials in the lock's URL (edited by hand)
            raise LockFormatError(
                f"{self.lockfile_path}: {exc.message}",
                hint="remove them from the lock's URL (or restore the lock from version "
                "control); a token goes in ONTOSKILLS_TOKEN, for a configured registry",
            ) from None

    # sources ------------------------------------------------------------------------
    def source(self, reg: RegistryConfig, pin: str | None = None) -> BaseSource:
        key = (reg.url, pin)
        if key not in self._sources:
            self._sources[key] = open_source(reg, self.options, pin=pin)
        return self._sources[key]

    # signed registries (signing/, docs/SECURITY.md) ----------------------------------------
    def remember_lock(self, lock: Lockfile) -> None:
        """The lock as it was when the command started (a mutation has just read it): what
        `locked_registry` answers from, so the file is not read again."""
        self._lock = lock

    def lock_at_start(self) -> Lockfile:
        """The lock as the command found it (read when nothing remembered it)."""
        self.locked_registry("")  # loads it when needed
        assert self._lock is not None
        return self._lock

    def locked_registry(self, url: str) -> LockedRegistry | None:
        """The lock's record of the registry at `url` (what it says about signatures)."""
        if self._lock is None:
            try:
                self._lock = load_lock(self.lockfile_path)
            except (OntoskillsError, OSError):
                self._lock = Lockfile()  # the command itself reports a bad lock
        return next((r for r in self._lock.registries.values() if same_location(r.url, url)), None)

    def expectation(self, reg: RegistryConfig) -> Expectation:
        locked = self.locked_registry(reg.url)
        root = None
        if reg.root:
            root = Path(reg.root)
            root = root if root.is_absolute() else self.config.path.parent / root
        return Expectation(
            root_file=root,
            locked_keys=locked.root_keys if locked is not None else (),
            locked_signed=bool(locked is not None and locked.signed),
            require_signed=self.require_signed or self.config.require_signed,
            builtin=same_location(reg.url, default_registry().url),
        )

    def opened(self, reg: RegistryConfig) -> Opened:
        """The registry checked once per command: signed ones verified from their root."""
        if reg.url not in self._opened:
            self._opened[reg.url] = open_registry(
                self.source(reg), self.home.state_dir / "tuf", self.expectation(reg), self.reporter
            )
        return self._opened[reg.url]

    def index_source(self, reg: RegistryConfig) -> BaseSource:
        """Where the index, sparse entries and manifests are read: a signed registry's
        source verifies each of them against its signed targets."""
        return self.opened(reg).source

    def snapshot(self, reg: RegistryConfig, pin: str | None = None) -> IndexSnapshot:
        key = (reg.url, pin)
        if key not in self._snapshots:
            self.reporter.stage(f"reading index of {reg.name}")
            src = self.source(reg, pin) if pin is not None else self.index_source(reg)
            snap = open_sparse(src) or src.load_index()  # per-package files when published
            for warning in snap.index.warnings:
                self.reporter.warn(warning)
            self._snapshots[key] = snap
        return self._snapshots[key]

    def find_package(
        self, package_id: str, registries: list[RegistryConfig] | None = None
    ) -> tuple[RegistryConfig, IndexEntry]:
        """First registry (in configured order) whose index lists the package."""
        regs = registries or self.registries()
        known: list[str] = []
        for reg in regs:
            entry = self.snapshot(reg).index.get(package_id)
            if entry is not None:
                return reg, entry
            known.extend(e.package_id for e in self.snapshot(reg).index)
        close = difflib.get_close_matches(package_id, known, n=3, cutoff=0.6)
        names = ", ".join(r.name for r in regs)
        hint = f"did you mean {', '.join(close)}?" if close else "check the name"
        raise NotFoundError(f"package {package_id} not found in registry {names}", hint=hint)

    def close(self) -> None:
        for opened in self._opened.values():
            opened.release()
        self._opened.clear()
        for src in self._sources.values():
            src.close()
        self._sources.clear()


def lock_registry_name(lock: Lockfile, reg: RegistryConfig) -> str:
    """The registry's name in the lock; a different URL under a taken name gets a suffix."""
    name = reg.name
    n = 2
    while name in lock.registries and lock.registries[name].url != reg.url:
        name = f"{reg.name}-{n}"
        n += 1
    return name
