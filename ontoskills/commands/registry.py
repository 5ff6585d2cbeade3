"""`ontoskills registry add|list|remove` (+ init/verify from publish/): configured registries."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import NotFoundError, UsageError
from ..manifest import Tier
from ..registries import RegistryConfig, RegistryKind, detect_kind
from ..safety import is_valid_name
from . import _context, registry_maint
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
            from pathlib import Path

            path = Path(url).expanduser()
            if not path.exists():
                raise UsageError(f"{url} does not exist", hint="give an existing folder or a URL")
            location = str(path.absolute())
        cfg = app_ctx.config
        tier = None if trust is None else trust.value
        reg = RegistryConfig(name, location, kind or detect_kind(location), tier)
        existing = [r for r in cfg.registries if r.name != name]
        cfg.registries = [*existing, reg]
        cfg.save()
        return Doc({"registry": reg.to_json()})

    def text(out: Output, doc: Doc) -> None:
        reg = doc.payload["registry"]
        cap = f", trust ≤ {reg['trust']}" if reg["trust"] else ""
        out.success(f"registry {reg['name']} -> {reg['url']} ({reg['kind']}{cap})")

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
            default = "  (default)" if r["default"] else ""
            out.stdout(f"{r['name']}\t{r['kind']}\t{r['url']}{trust}{default}")

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


def register(app: typer.Typer) -> None:
    registry_maint.register_into(registry_app)
    app.add_typer(registry_app, name="registry")
