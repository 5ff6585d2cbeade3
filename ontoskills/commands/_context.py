"""Per-invocation settings shared by every command: global flags + environment."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import envvars
from ..config import Config, default_registry, load_config
from ..errors import ConfigError, UsageError
from ..ownership import Keep, keeps
from ..paths import Cache, Home
from ..progress import NullReporter, Reporter
from ..project import Project, discover

if TYPE_CHECKING:  # imported when used: `search`, `show` and `serve` never need them
    from ..install.session import Session
    from ..install.sync import Desired
    from ..sources import SourceOptions
    from ..sources._retry import Deadline

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Only errors and warnings.")]


@dataclass
class AppContext:
    home_arg: str | None = None
    lockfile_arg: str | None = None
    cache_arg: str | None = None
    registry_arg: str | None = None
    offline: bool = False
    allow_insecure_http: bool = False
    require_signed: bool = False
    json: bool = False
    quiet: bool = False
    no_color: bool = False
    project_arg: str | None = None  # --project DIR: discover from DIR, not the cwd
    global_home: bool = False  # -g/--global: ignore any project
    _config: Config | None = field(default=None, repr=False)
    _deadline: Deadline | None = field(default=None, repr=False)
    _project: tuple[Project | None] | None = field(default=None, repr=False)

    @property
    def project(self) -> Project | None:
        """The project this command works on (docs/CLI.md "Projects"): found from the
        current folder (or --project DIR) upward; none under -g, --home or --lockfile, which
        keep their meaning (the ONTOSKILLS_HOME/LOCKFILE variables only move the global home)."""
        if self._project is None:
            explicit = self.home_arg or self.lockfile_arg
            if self.project_arg and (explicit or self.global_home):
                raise UsageError(
                    "--project cannot be combined with -g/--global, --home or --lockfile",
                    hint="--project serves a project's own tree and lock",
                )
            found = None
            if not (explicit or self.global_home):
                start = Path(self.project_arg) if self.project_arg else Path.cwd()
                if self.project_arg and not start.is_dir():
                    raise UsageError(f"--project {self.project_arg}: no such folder")
                found = discover(start)
                if found is None and self.project_arg:
                    raise UsageError(
                        f"no ontoskills.toml in {start} or any folder above it",
                        hint=f"create one with `ontoskills --project {start} init`",
                    )
            self._project = (found,)
        return self._project[0]

    def reset_project(self) -> None:
        """Read the manifests again (after `add` or `remove` edited one)."""
        self._project = None

    @property
    def home(self) -> Home:
        project = self.project
        return Home(project.home_dir) if project is not None else Home.resolve(self.home_arg)

    @property
    def cache(self) -> Cache:
        return Cache.resolve(self.cache_arg)

    @property
    def lockfile(self) -> Path:
        project = self.project
        return project.lockfile if project is not None else self.home.lockfile(self.lockfile_arg)

    @property
    def config(self) -> Config:
        """config.toml of the global home (a project's registries: `session_config`)."""
        if self._config is None:
            self._config = load_config(Home.resolve(self.home_arg).config_file)
        return self._config

    @property
    def where(self) -> str:
        """Which tree this command used, for the lines that say so (list, search, serve)."""
        project = self.project
        if project is not None:
            return f"project {project.root} (tree {project.home_dir})"
        return f"home {self.home.root}"

    @property
    def session_config(self) -> Config:
        """config.toml with the project's registries in front: a manifest's registry wins
        over a configured one of the same name (the manifest is what a fresh clone has), and
        the configured ones (or the built-in OntoStore) stay reachable; the manifest's
        `[embeddings]` model, revision and encoder settings (pooling, prefixes, max_tokens,
        dimension) over config.toml's: the project's vectors are made as its manifest says."""
        import dataclasses

        config, project = self.config, self.project
        if project is None:
            return config
        ours = project.registries()
        names = {r.name for r in ours}
        theirs = [r for r in config.effective_registries() if r.name not in names]
        emb = project.manifest.embeddings
        embeddings = dataclasses.replace(
            config.embeddings,
            model=emb.model or config.embeddings.model,
            revision=emb.revision or config.embeddings.revision,
            **emb.encoder,
        )
        return dataclasses.replace(config, registries=[*ours, *theirs], embeddings=embeddings)

    def desired(self) -> Desired:
        """What the project's manifests ask for (commands/_project.py runs it)."""
        from ..install.sync import Desired

        project = self.project
        assert project is not None
        config = self.session_config
        known = {r.name: r for r in [default_registry(), *config.registries]}
        emb = project.manifest.embeddings
        return Desired(
            manifest=project.manifest.path,
            dependencies=project.dependencies(),
            policy=project.manifest.policy,
            with_embeddings=emb.enabled,
            registries=known,
        )

    def keeps(self, *, cache: bool = True, registries: bool = True) -> list[Keep]:
        """What a delete or replace of a folder the user names must never reach (see
        ownership.py): the home, the lockfile's folder, the cache (unless it is the target),
        $HOME, and every local registry this invocation knows (unless it writes into one)."""
        out = keeps(home=self.home.root, lockfile=self.lockfile)
        if cache:
            out.append(Keep("the cache", self.cache.root))
        if not registries:
            return out
        urls = [self.registry_override] if self.registry_override else []
        # a broken config.toml must not stop `cache clean`: its registries are then unknown
        with contextlib.suppress(ConfigError):
            urls += [r.url for r in self.config.registries]
        for url in urls:
            path = url.removeprefix("file://")
            if url and "://" not in path and "@" not in path:
                out.append(Keep("the registry", Path(path).expanduser()))
        return out

    @property
    def registry_override(self) -> str | None:
        return self.registry_arg or os.environ.get("ONTOSKILLS_REGISTRY") or None

    @property
    def interactive(self) -> bool:
        """Prompts are allowed only on a TTY and never under CI."""
        return sys.stdin.isatty() and not in_ci()

    def session(self, reporter: Reporter | None = None) -> Session:
        """The install-side session for this invocation."""
        from ..install.session import Session

        return Session(
            home=self.home,
            cache=self.cache,
            config=self.session_config,
            lockfile_path=self.lockfile,
            options=self.source_options(reporter),
            reporter=reporter or NullReporter(),
            registry_override=self.registry_override,
            require_signed=self.require_signed
            or bool(self.project and self.project.manifest.policy.require_signed),
        )

    def source_options(
        self, reporter: Reporter | None = None, *, also_token_for: tuple[str, ...] = ()
    ) -> SourceOptions:
        """Source settings for this command. ONTOSKILLS_TOKEN may go to the registries the
        user configured (the built-in one while no other is) and ONTOSKILLS_TOKEN_FOR's
        origins, never to one only a lock or --registry names (docs/SECURITY.md);
        `also_token_for`: a registry being configured right now (`registry add`)."""
        from ..sources import SourceOptions
        from ..sources._auth import token_origins

        net = self.config.network
        # config.toml's only: a manifest comes with the repository someone cloned, and its
        # registries get a token only through ONTOSKILLS_TOKEN_FOR (docs/SECURITY.md)
        configured = [r.url for r in self.config.effective_registries()]
        return SourceOptions(
            token_origins=token_origins([*configured, *also_token_for]),
            cache=self.cache,
            offline=self.offline or envvars.flag("ONTOSKILLS_OFFLINE"),
            allow_insecure_http=self.allow_insecure_http or net.allow_insecure_http,
            timeout=float(net.timeout),
            retries=int(net.retries),
            parallel=int(net.parallel),
            deadline=self.deadline,
            reporter=reporter,
        )

    @property
    def deadline(self) -> Deadline:
        """The command's one network budget: ONTOSKILLS_NETWORK_DEADLINE, else `[network]
        deadline`, else 90 s; the clock starts at the first request (docs/CLI.md)."""
        if self._deadline is None:
            from ..sources._retry import Deadline

            if os.environ.get(envvars.NETWORK_DEADLINE, "").strip():
                seconds = envvars.get(envvars.NETWORK_DEADLINE)
            else:
                seconds = float(self.config.network.deadline)
            self._deadline = Deadline(seconds)
        return self._deadline


def in_ci() -> bool:
    """CI set to anything but ""/0/false/no: no prompts, no progress bars."""
    return envvars.flag("CI")


def get(ctx: typer.Context, *, json: bool = False, quiet: bool = False) -> AppContext:
    """The AppContext from the root callback, with per-command --json/--quiet folded in."""
    root = ctx.find_root()
    app: AppContext = root.obj if isinstance(root.obj, AppContext) else AppContext()
    root.obj = app
    app.json = app.json or json
    app.quiet = app.quiet or quiet
    return app
