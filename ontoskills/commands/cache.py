"""`ontoskills cache dir|clean`: the download cache (safe to delete at any time)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from ..errors import UsageError
from ..ownership import check_target
from . import _context
from ._context import JsonOpt, QuietOpt
from ._output import Output, run


@dataclass(frozen=True)
class CacheDir:
    path: Path
    bytes: int  # 0 unless --json: a large cache is not walked to print a path

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "bytes": self.bytes}


@dataclass(frozen=True)
class CacheCleaned:
    path: Path
    freed_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "freed_bytes": self.freed_bytes}


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def register(app: typer.Typer) -> None:
    cache_app = typer.Typer(help="Inspect or clear the download cache.", no_args_is_help=True)
    app.add_typer(cache_app, name="cache")

    @cache_app.command("dir")
    def cache_dir(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """Print the cache folder."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> CacheDir:
            root = app_ctx.cache.root
            # sized only for --json: a large cache need not be walked to print a path
            return CacheDir(root, _size(root) if app_ctx.json else 0)

        run(app_ctx, body, lambda out, found: out.stdout(str(found.path)))

    @cache_app.command("clean")
    def cache_clean(ctx: typer.Context, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        """Delete every cached download (installed packages are not affected)."""
        app_ctx = _context.get(ctx, json=json, quiet=quiet)

        def body(out: Output) -> CacheCleaned:
            root = app_ctx.cache.root
            if root.exists() and not root.is_dir():  # never delete a file a typo pointed at
                raise UsageError(
                    f"cache path {root} is not a folder",
                    hint="fix ONTOSKILLS_CACHE_DIR; nothing was deleted",
                )
            # ONTOSKILLS_CACHE_DIR is a folder the user names: never the home, a registry,
            # the lockfile or $HOME, and only what ontoskills wrote (ownership.py, Cache.clean)
            check_target(
                root,
                app_ctx.keeps(cache=False),
                what="cache folder",
                hint="point ONTOSKILLS_CACHE_DIR at a folder of its own; nothing was deleted",
            )
            freed = app_ctx.cache.clean() if root.is_dir() else 0
            return CacheCleaned(root, freed)

        def text(out: Output, cleaned: CacheCleaned) -> None:
            out.success(f"removed {cleaned.path} ({cleaned.freed_bytes / 1e6:.1f} MB)")

        run(app_ctx, body, text)
