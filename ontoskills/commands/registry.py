"""`ontoskills registry add|list|remove` (+ init/verify from publish/): configured registries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import NotFoundError, UsageError
from ..manifest import Tier
from ..redact import redact_url
from ..registries import RegistryConfig, RegistryKind, detect_kind
from ..safety import is_valid_name
from ..sources import check_location
from . import _context, registry_maint, registry_signing
from ._context import AppContext, JsonOpt, QuietOpt
from ._output import Output, run

registry_app = typer.Typer(
    help="Manage registries (where packages come from).", no_args_is_help=True
)


@dataclass(frozen=True)
class RegistryAdded:
    registry: RegistryConfig
    root_fingerprints: tuple[str, ...]  # with --root / --trust-on-first-use: what is trusted

    def to_json(self) -> dict[str, Any]:
        return {
            "registry": self.registry.to_json(),
            "root_fingerprints": list(self.root_fingerprints),
        }


@dataclass(frozen=True)
class RegistryList:
    registries: tuple[RegistryConfig, ...]  # in resolution order
    default: bool  # none configured: the built-in public registry

    def to_json(self) -> dict[str, Any]:
        return {"registries": [{**r.to_json(), "default": self.default} for r in self.registries]}


@dataclass(frozen=True)
class RegistryRemoved:
    removed: str

    def to_json(self) -> dict[str, Any]:
        return {"removed": self.removed}


RegistryNameArg = Annotated[str, typer.Argument(help="Short name, e.g. 'company'.")]
LocationArg = Annotated[str, typer.Argument(help="https URL, git URL or local path.")]
TrustCapOpt = Annotated[
    Tier | None, typer.Option("--trust", help="Cap the tier of packages from here.")
]
KindOpt = Annotated[
    RegistryKind | None, typer.Option("--kind", help="Force the kind (else guessed).")
]
RootOpt = Annotated[
    Path | None,
    typer.Option("--root", metavar="FILE", help="Trust this TUF root.json (signed registry)."),
]
PackageIdOpt = Annotated[
    str | None,
    typer.Option(
        "--package-id",
        metavar="AUTHOR/PKG",
        help="Kind skills: the package id of the repository (default: owner/repo of its URL).",
    ),
]
FirstUseOpt = Annotated[
    bool,
    typer.Option(
        "--trust-on-first-use",
        help="Trust the registry's current root.json (prints its key fingerprints).",
    ),
]


@registry_app.command("add")
def add_cmd(
    ctx: typer.Context,
    name: RegistryNameArg,
    url: LocationArg,
    trust: TrustCapOpt = None,
    kind: KindOpt = None,
    root: RootOpt = None,
    package_id: PackageIdOpt = None,
    trust_on_first_use: FirstUseOpt = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Add (or replace) a registry; resolution tries registries in the order added."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> RegistryAdded:
        if not is_valid_name(name):
            raise UsageError(
                f"invalid registry name {name!r}", hint="lowercase letters, digits, . _ -"
            )
        location = url
        if "://" not in url and "@" not in url:
            path = Path(url).expanduser()
            if not path.exists():
                raise UsageError(f"{url} does not exist", hint="give an existing folder or a URL")
            location = str(path.absolute())
        cfg = app_ctx.config
        tier = None if trust is None else trust.value
        reg = RegistryConfig(
            name, location, kind or detect_kind(location), tier, package_id=package_id
        )
        check_location(reg)  # a file, a device, a folder without index.json: not a registry
        prints: list[str] = []
        if root is not None or trust_on_first_use:
            if root is not None and trust_on_first_use:
                raise UsageError("--root and --trust-on-first-use exclude each other")
            reg, prints = _pin_root(app_ctx, out, reg, root)
        existing = [r for r in cfg.registries if r.name != name]
        cfg.registries = [*existing, reg]
        cfg.save()
        return RegistryAdded(reg, tuple(prints))

    def text(out: Output, added: RegistryAdded) -> None:
        reg = added.registry
        cap = f", trust ≤ {reg.trust}" if reg.trust else ""
        signed = ", signed" if reg.root else ""
        out.success(f"registry {reg.name} -> {redact_url(reg.url)} ({reg.kind}{cap}{signed})")

    run(app_ctx, body, text)


def _pin_root(
    app_ctx: AppContext, out: Output, reg: RegistryConfig, root: Path | None
) -> tuple[RegistryConfig, list[str]]:
    """A signed registry's root trusted (`root`: that root.json; None: the registry's current
    one, on first use): `reg` naming its stored copy, and its keys' fingerprints."""
    from ..signing.trust import pin_root  # tuf: only for a signed registry

    options = app_ctx.source_options(also_token_for=(reg.url,))
    # beside config.toml, which names the registry: the global home, in a project too
    pinned = pin_root(reg, root, options, app_ctx.config.path.parent)
    if pinned.first_use and not app_ctx.json:  # what was trusted, for the user to compare
        out.info(f"trusting {reg.name}'s root v{pinned.version} on first use; its keys:")
        for line in pinned.fingerprints:
            out.info(f"  {line}")
    stored = RegistryConfig(reg.name, reg.url, reg.kind, reg.trust, pinned.stored, reg.package_id)
    return stored, pinned.fingerprints


@registry_app.command("list")
def list_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show registries in resolution order (the public OntoStore when none is configured)."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> RegistryList:
        cfg = app_ctx.config
        return RegistryList(tuple(cfg.effective_registries()), default=not cfg.registries)

    def text(out: Output, listed: RegistryList) -> None:
        for r in listed.registries:
            trust = f"  trust ≤ {r.trust}" if r.trust else ""
            signed = f"  signed (root {r.root})" if r.root else ""
            default = "  (default)" if listed.default else ""
            out.stdout(f"{r.name}\t{r.kind}\t{redact_url(r.url)}{trust}{signed}{default}")

    run(app_ctx, body, text)


@registry_app.command("remove")
def remove_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument()],
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Remove a registry from the config (installed packages stay installed)."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> RegistryRemoved:
        cfg = app_ctx.config
        if cfg.registry(name) is None:
            raise NotFoundError(f"no registry named {name}", hint="see `ontoskills registry list`")
        cfg.registries = [r for r in cfg.registries if r.name != name]
        cfg.save()
        return RegistryRemoved(name)

    run(app_ctx, body, lambda out, gone: out.success(f"removed registry {gone.removed}"))


def register(app: typer.Typer) -> None:
    registry_maint.register_into(registry_app)
    registry_signing.register_into(registry_app)
    app.add_typer(registry_app, name="registry")
