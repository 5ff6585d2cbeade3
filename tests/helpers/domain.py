"""Drive the install domain in-process: Session + install()/update()/ci()/remove()/...

Real registries (folder, HTTP on loopback, git), real home, real transaction: the same calls
the CLI makes, minus the interpreter start-up and the rendering. Each call gets a fresh
Session, as each CLI invocation does; the session is wired by the CLI's own `AppContext`
(flags + environment -> home, lockfile, cache, config, source options), so a test here and
the CLI resolve the same paths. Warnings arrive through the reporter: `Domain.warnings`
holds those of the last call.

Tests of the CLI contract itself (exit codes, stdout/stderr, JSON) use the `cli` fixture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ontoskills import lockfile
from ontoskills.commands._context import AppContext
from ontoskills.config import load_config
from ontoskills.install.lifecycle import ci, remove, set_enabled, update
from ontoskills.install.mutation import Report
from ontoskills.install.operations import install
from ontoskills.install.options import InstallOptions
from ontoskills.install.queries import DoctorReport, PackageInfo, doctor, package_info
from ontoskills.install.session import Session
from ontoskills.paths import Home
from ontoskills.progress import NullReporter
from ontoskills.registries import RegistryConfig, detect_kind


@dataclass
class Domain:
    home: Path | None = None  # None: ONTOSKILLS_HOME (the `env` fixture)
    lockfile: Path | None = None
    cache: Path | None = None
    registry: str | None = None  # like --registry for every call (None: the config's)
    offline: bool = False
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def context(self, registry: str | None = None) -> AppContext:
        return AppContext(
            home_arg=None if self.home is None else str(self.home),
            lockfile_arg=None if self.lockfile is None else str(self.lockfile),
            cache_arg=None if self.cache is None else str(self.cache),
            registry_arg=registry if registry is not None else self.registry,
            offline=self.offline,
        )

    def session(self, registry: str | None = None) -> Session:
        reporter = NullReporter()
        self.warnings, self.notes = reporter.warnings, reporter.notes
        return self.context(registry).session(reporter)

    @property
    def home_path(self) -> Path:
        return self.context().home.root

    @property
    def lock_path(self) -> Path:
        return self.context().lockfile

    def lock(self) -> lockfile.Lockfile:
        return lockfile.load(self.lock_path)

    def package_dir(self, pid: str) -> Path:
        return Home.resolve(str(self.home_path)).package_dir(pid)

    # mutations ------------------------------------------------------------------------
    def install(self, *specs: str, registry: str | None = None, **opts: object) -> Report:
        return install(self.session(registry), list(specs), InstallOptions(**opts))  # type: ignore[arg-type]

    def update(self, *packages: str, registry: str | None = None, **opts: object) -> Report:
        return update(self.session(registry), list(packages), InstallOptions(**opts))  # type: ignore[arg-type]

    def ci(self, **opts: object) -> Report:
        return ci(self.session(), InstallOptions(frozen=True, **opts))  # type: ignore[arg-type]

    def remove(self, *packages: str) -> Report:
        return remove(self.session(), list(packages))

    def enable(self, *targets: str) -> Report:
        return set_enabled(self.session(), list(targets), True)

    def disable(self, *targets: str) -> Report:
        return set_enabled(self.session(), list(targets), False)

    # queries --------------------------------------------------------------------------
    def doctor(self, *, fast: bool = False) -> DoctorReport:
        return doctor(self.session(), fast=fast)

    def info(self, spec: str) -> PackageInfo:
        return package_info(self.session(), spec)

    # config (what `registry add` writes) ------------------------------------------------
    def add_registry(self, name: str, location: Path | str, trust: str | None = None) -> None:
        where = str(location) if "://" in str(location) else str(Path(location).absolute())
        config = load_config(Home.resolve(str(self.home_path)).config_file)
        kept = [r for r in config.registries if r.name != name]
        config.registries = [*kept, RegistryConfig(name, where, detect_kind(where), trust)]
        config.save()
