"""`ontoskills registry add|list|remove` (+ init/verify from publish/): configured registries."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import NotFoundError, UsageError
from ..manifest import Tier
from ..registries import RegistryConfig, RegistryKind, detect_kind
from ..safety import is_valid_name
from ..sources import check_location
from . import _context, registry_maint, registry_signing
from ._context import JsonOpt, QuietOpt
from ._output import Output, run
from ._result import Doc

registry_app = typer.Typer(
    help="Manage registries (where packages come from).", no_args_is_help=True
)


@registry_app.command("add")
def add_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Short name, e.g. 'company'.")],
    url: Annotated[str, typer.Argument(help="https URL, git URL or local path.")],
    trust: Annotated[
        Tier | None, typer.Option("--trust", help="Cap the tier of packages from here.")
    ] = None,
    kind: Annotated[
        RegistryKind | None, typer.Option("--kind", help="Force the kind (else guessed).")
    ] = None,
    root: Annotated[
        Path | None,
        typer.Option("--root", metavar="FILE", help="Trust this TUF root.json (signed registry)."),
    ] = None,
    trust_on_first_use: Annotated[
        bool,
        typer.Option(
            "--trust-on-first-use",
            help="Trust the registry's current root.json (prints its key fingerprints).",
        ),
    ] = False,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Add (or replace) a registry; resolution tries registries in the order added."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Doc:
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
        reg = RegistryConfig(name, location, kind or detect_kind(location), tier)
        check_location(reg)  # a file, a device, a folder without index.json: not a registry
        prints: list[str] = []
        if root is not None or trust_on_first_use:
            if root is not None and trust_on_first_use:
                raise UsageError("--root and --trust-on-first-use exclude each other")
            stored, prints = _pin_root(app_ctx, reg, root, out)
            reg = RegistryConfig(reg.name, reg.url, reg.kind, reg.trust, stored)
        existing = [r for r in cfg.registries if r.name != name]
        cfg.registries = [*existing, reg]
        cfg.save()
        return Doc({"registry": reg.to_json(), "root_fingerprints": prints})

    def text(out: Output, doc: Doc) -> None:
        reg = doc.payload["registry"]
        cap = f", trust ≤ {reg['trust']}" if reg["trust"] else ""
        signed = ", signed" if reg["root"] else ""
        out.success(f"registry {reg['name']} -> {reg['url']} ({reg['kind']}{cap}{signed})")

    run(app_ctx, body, text)


@registry_app.command("list")
def list_cmd(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Show registries in resolution order (the public OntoStore when none is configured)."""
    app_ctx = _context.get(ctx, json=json, quiet=quiet)

    def body(out: Output) -> Doc:
        cfg = app_ctx.config
        default = not cfg.registries
        regs = [{**r.to_json(), "default": default} for r in cfg.effective_registries()]
        return Doc({"registries": regs})

    def text(out: Output, doc: Doc) -> None:
        for r in doc.payload["registries"]:
            trust = f"  trust ≤ {r['trust']}" if r["trust"] else ""
            signed = f"  signed (root {r['root']})" if r["root"] else ""
            default = "  (default)" if r["default"] else ""
            out.stdout(f"{r['name']}\t{r['kind']}\t{r['url']}{trust}{signed}{default}")

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

    def body(out: Output) -> Doc:
        cfg = app_ctx.config
        if cfg.registry(name) is None:
            raise NotFoundError(f"no registry named {name}", hint="see `ontoskills registry list`")
        cfg.registries = [r for r in cfg.registries if r.name != name]
        cfg.save()
        return Doc({"removed": name})

    run(app_ctx, body, lambda out, doc: out.success(f"removed registry {doc.payload['removed']}"))


def _pin_root(
    app_ctx: _context.AppContext, reg: RegistryConfig, root: Path | None, out: Output
) -> tuple[str, list[str]]:
    """Validate a root (a file, or the registry's current one), keep a copy in the home
    (`trust/NAME.root.json`, named relative to config.toml) and return its fingerprints."""
    from ..fsutil import atomic_write_bytes
    from ..signing import MAX_ROOT_BYTES, ROOT_PATH
    from ..signing.trust import fingerprints, parse_root, read_root_file
    from ..sources import open_source

    if root is not None:
        data = read_root_file(root)
        where = str(root)
    else:
        source = open_source(reg, app_ctx.source_options(also_token_for=(reg.url,)))
        try:
            data = source.read(ROOT_PATH, max_bytes=MAX_ROOT_BYTES)
        except NotFoundError:
            raise UsageError(
                f"{reg.url} serves no {ROOT_PATH}: it is not a signed registry",
                hint="add it without --trust-on-first-use",
            ) from None
        finally:
            source.close()
        where = f"{reg.name}: {ROOT_PATH}"
    md = parse_root(data, where)
    prints = fingerprints(md)
    if root is None and not app_ctx.json:  # what was trusted, for the user to compare
        out.info(f"trusting {reg.name}'s root v{md.signed.version} on first use; its keys:")
        for line in prints:
            out.info(f"  {line}")
    rel = f"trust/{reg.name}.root.json"
    atomic_write_bytes(app_ctx.home.config_file.parent / rel, data)
    return rel, prints


def register(app: typer.Typer) -> None:
    registry_maint.register_into(registry_app)
    registry_signing.register_into(registry_app)
    app.add_typer(registry_app, name="registry")
