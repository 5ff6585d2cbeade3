"""Folders a user NAMES (`pack --out`, `ONTOSKILLS_CACHE_DIR`, `--keys`, a local registry's
package folder): what ontoskills may delete or replace there, decided before anything moves.

The home and cache internals are guarded by fsutil (guarded roots); a folder the user names
is different: a typo or a shared variable can point it at a project, the home, the user's
home folder or `/`. Two checks, one for where and one for what:

Containment (`check_target`): the target, symlinks resolved, must not be, contain or lie
inside a folder the command reads or keeps (`Keep`: the sources, the home, the cache, the
registry), nor be or contain the lockfile's folder or the user's home folder (folders inside
those two are ordinary places: `dist/` beside a project's lock). Refused with exit 2, one
line naming both paths.

Ownership: ontoskills deletes only what it can prove it wrote.
- An output folder (`replace_output`) gets a marker, `.ontoskills-output`, listing every
  file ontoskills wrote into it. A later run replaces it only when the marker is there and
  every file in the folder is listed; anything else (one file the user added, an output of
  a version that wrote no marker, a project with its own package.json) is refused unless
  the folder is empty. The new output is built beside the old one (a hidden sibling) and
  swapped in with two renames, so a failure leaves the old output whole; what a killed run
  leaves beside it carries the marker and is put back or removed by the next run.
- A folder with a fixed layout (`prune`: the cache) has its managed entry names and a tag
  file it writes when it creates the folder; only those names are removed, and the folder
  itself only when it held nothing else.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .errors import UsageError
from .fsutil import atomic_write_bytes, fsync_dir, remove_tree

T = TypeVar("T")

OUTPUT_MARKER = ".ontoskills-output"
_MARKER_HEAD = "ontoskills output: every file listed below was written by ontoskills\n"
_MAX_MARKER_BYTES = 16 * 1024 * 1024  # 10,000 files of 1,024-byte paths, with room
_NEW, _OLD = "ontoskills-new", "ontoskills-old"


@dataclass(frozen=True)
class Keep:
    """A folder no delete or replace may reach: `label` names it in the refusal."""

    label: str
    path: Path
    inside_ok: bool = False  # a target inside it is fine: the lockfile's folder, $HOME


def keeps(
    *, home: Path | None = None, lockfile: Path | None = None, cache: Path | None = None
) -> list[Keep]:
    """The folders every command keeps: the home, the lockfile's folder, the cache, and
    the user's home folder."""
    out = []
    if home is not None:
        out.append(Keep("the home", home))
    if lockfile is not None:
        out.append(Keep("the lockfile's folder", lockfile.parent, inside_ok=True))
    if cache is not None:
        out.append(Keep("the cache", cache))
    with contextlib.suppress(RuntimeError, KeyError):  # no HOME and no passwd entry
        out.append(Keep("your home folder", Path.home(), inside_ok=True))
    return out


def _real(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def check_target(target: Path, keep: Iterable[Keep], *, what: str, hint: str) -> Path:
    """Refuse (exit 2) a `target` that is, contains or lies inside a kept folder, after
    symlinks; returns the target's real path, the one to act on."""
    real = _real(target)
    for k in keep:
        other = _real(k.path)
        if real == other:
            how = "is"
        elif other.is_relative_to(real):
            how = "contains"
        elif not k.inside_ok and real.is_relative_to(other):
            how = "is inside"
        else:
            continue
        raise UsageError(f"{what} {target} {how} {k.label} {k.path}", hint=hint)
    return real


# ------------------------------------------------------------------ output folders
def _listed(folder: Path) -> set[str] | None:
    """The files our marker in `folder` lists, or None when there is no marker of ours."""
    path = folder / OUTPUT_MARKER
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MARKER_BYTES:
            return None
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(_MARKER_HEAD):
        return None
    return set(text[len(_MARKER_HEAD) :].splitlines())


def _entries(folder: Path) -> Iterable[str]:
    """Relative POSIX paths of everything in folder but folders (links are not followed:
    a symlinked folder is an entry, never walked)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        links = [d for d in dirnames if (base / d).is_symlink()]
        for name in filenames + links:
            yield (base / name).relative_to(folder).as_posix()


def foreign_entry(folder: Path) -> str | None:
    """The first entry of `folder` ontoskills cannot prove it wrote; None when the folder
    is ours (our marker lists every file) or empty."""
    listed = _listed(folder)
    for rel in sorted(_entries(folder)):
        if listed is None or (rel != OUTPUT_MARKER and rel not in listed):
            return rel
    return None


def _write_marker(folder: Path, files: Sequence[str]) -> None:
    body = _MARKER_HEAD + "".join(f"{rel}\n" for rel in sorted(files))
    atomic_write_bytes(folder / OUTPUT_MARKER, body.encode("utf-8"))


def listed_files(folder: Path) -> set[str] | None:
    """The files our marker in `folder` lists (None: no marker of ours): for outputs that
    grow in place (`mirror`), which write their marker as they go."""
    return _listed(folder)


def write_marker(folder: Path, files: Sequence[str]) -> None:
    """Record `files` as ours: written BEFORE they are, so a killed run leaves only them."""
    _write_marker(folder, files)


def _not_ours(entry: str, what: str) -> UsageError:
    return UsageError(
        f"{what} holds {entry!r}, which ontoskills did not write",
        hint="choose a new or empty folder (ontoskills replaces only its own output)",
    )


def replace_output(out: Path, build: Callable[[Path], T], *, what: str, given: Path) -> T:
    """Build a new output with `build(folder)` beside `out`, then swap it in.

    `out` (a real path: `check_target` first; `given` is how the user named it) must be
    missing, empty, or ours. A failure before the swap removes the new folder and leaves
    `out` as it was."""
    what = f"{what} {given}" + ("" if Path(os.path.abspath(given)) == out else f" (-> {out})")
    _recover(out)
    if os.path.lexists(out):
        if not out.is_dir() or out.is_symlink():
            raise UsageError(f"{what} is not a folder", hint="give a folder")
        entry = foreign_entry(out)
        if entry is not None:
            raise _not_ours(entry, what)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.parent / f".{out.name}.{_NEW}-{os.getpid()}"
    try:
        os.mkdir(stage, 0o755)
    except FileExistsError:  # not ours (ours were just recovered): leave it be
        raise UsageError(
            f"{stage} is in the way of {what}", hint="remove or rename it, then retry"
        ) from None
    try:
        os.chmod(stage, 0o755)
        _write_marker(stage, [])  # first: a killed build leaves a folder we can recognise
        result = build(stage)
        _write_marker(stage, [rel for rel in _entries(stage) if rel != OUTPUT_MARKER])
        _swap(stage, out, what)
    except BaseException:
        with contextlib.suppress(OSError):
            remove_tree(stage)
        raise
    return result


def _swap(stage: Path, out: Path, what: str) -> None:
    if os.path.isdir(out) and any(os.scandir(out)):
        old = out.parent / f".{out.name}.{_OLD}-{os.getpid()}"
        os.replace(out, old)
        entry = foreign_entry(old)  # written between our check and the move: put it back
        if entry is not None:
            os.replace(old, out)
            raise _not_ours(entry, what)
        os.replace(stage, out)
        remove_tree(old)
    else:
        os.replace(stage, out)  # rename(2) replaces an empty folder
    fsync_dir(out.parent)


def _recover(out: Path) -> None:
    """What a killed run left beside `out`, recognised by name AND our marker: a previous
    output moved aside goes back when `out` is missing; anything else of ours is removed."""
    if not out.parent.is_dir():
        return
    prefix = f".{out.name}."
    for entry in sorted(os.scandir(out.parent), key=lambda e: e.name):
        rest = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
        if not rest.startswith((_NEW + "-", _OLD + "-")) or entry.is_symlink():
            continue
        path = Path(entry.path)
        if not entry.is_dir() or _listed(path) is None:
            continue
        if rest.startswith(_OLD) and not os.path.lexists(out):
            os.replace(path, out)
        else:
            remove_tree(path)


# ------------------------------------------------------------- folders with a layout
def prune(root: Path, managed: Sequence[str], *, tagged: bool, tag: str) -> list[str]:
    """Remove the `managed` entries of `root`; `root` itself (and its `tag`) only when it
    was `tagged` as ours and held nothing else. Returns the other entries, kept."""
    others = sorted(
        e.name for e in os.scandir(root) if e.name not in managed and not (tagged and e.name == tag)
    )
    for name in managed:
        remove_tree(root / name)
    if tagged and not others:
        remove_tree(root / tag)
        with contextlib.suppress(OSError):  # something arrived meanwhile: it stays
            os.rmdir(root)
    return others
