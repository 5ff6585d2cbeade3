"""`pack --from-skill-md`: SKILL.md folders -> minimal valid OntoSkills Turtle.

For authors without the OntoSkills compiler. Each `SKILL.md` is compiled by the one SKILL.md
compiler (ontoskills/skillmd.py, shared with registries of kind `skills`) into
`<its folder>/ontoskill.ttl`: one `oc:Skill` node from the frontmatter, the body as ordered
sections of typed blocks, rules as knowledge, in the vocabulary the compiler uses.
The SKILL.md itself stays in the package and its `files` array: `ontoskills serve` hands it
to Skills-extension hosts as is.
What it leaves out compared with the full compiler is listed in docs/PUBLISHING.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .. import limits
from ..errors import FormatError, LimitExceededError, UsageError
from ..fsutil import atomic_write_bytes
from ..ownership import Keep, check_target, replace_output
from ..safety import split_package_id
from ..skillmd import SKILL_MD, SkillMd, parse_skill_md, skill_iri, skill_turtle
from .files import copy_files, stat_files, walk_package
from .pack import MAIN, PackResult, _existing, pack

__all__ = ["SKILL_MD", "SkillMd", "convert", "parse_skill_md", "skill_iri", "skill_turtle"]


def convert(
    src: Path,
    out: Path | None = None,
    *,
    package_id: str | None = None,
    version: str | None = None,
    description: str | None = None,
    write: bool = True,
    keep: Sequence[Keep] = (),
) -> PackResult:
    """Write `ontoskill.ttl` for every SKILL.md under src (into out, default src), then pack.

    Every source file's type and size are checked before anything is read or written. An
    `out` folder is a folder the user names (ownership.py): never the sources or a `keep`
    folder, replaced only when it is a previous output of ours, built beside it and swapped
    in, so nothing is written when the answer is no and a failure keeps the old output."""
    old = _existing(src)
    pid = package_id or old.get("package_id")
    if not isinstance(pid, str):
        raise UsageError(f"{src}: no package id", hint="pass --id author/package")
    split_package_id(pid, "package id")
    real_out = None
    if out is not None and write:
        real_out = check_target(
            out,
            [Keep("the sources", src), *keep],
            what="--out",
            hint="choose an --out folder apart from the sources, the home and the cache "
            "(or omit --out to convert in place)",
        )
    files = stat_files(
        src, walk_package(src), read_whole={SKILL_MD: limits.MAX_SKILL_MD_BYTES}
    )
    sources = [f.path for f in files if f.path.rsplit("/", 1)[-1] == SKILL_MD]
    if not sources:
        raise UsageError(f"{src}: no SKILL.md found", hint="one folder per skill, each a SKILL.md")
    modules: dict[str, bytes] = {}
    seen: dict[str, str] = {}
    for rel in sources:
        data = _read_skill_md(src / rel, rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"{rel}: not valid UTF-8") from None
        skill = parse_skill_md(text, rel)
        if skill.id in seen:
            raise FormatError(f"skill name {skill.id!r} is used by {seen[skill.id]} and {rel}")
        seen[skill.id] = rel
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        modules[folder + MAIN] = skill_turtle(pid, skill)
    target = out or src
    if not write:
        return PackResult(target, {"package_id": pid, "modules": sorted(modules)}, b"", [])

    def build(folder: Path) -> PackResult:
        if folder != src:
            copy_files(src, folder, files)
        for rel, data in modules.items():
            dest = folder / rel
            if not dest.is_file() or dest.read_bytes() != data:
                atomic_write_bytes(dest, data)
        return pack(
            folder,
            package_id=pid,
            version=version or old.get("version"),
            description=description if description is not None else old.get("description"),
        )

    if real_out is None:
        return build(src)
    result = replace_output(real_out, build, what="--out", given=target)
    result.root = target
    return result


def _read_skill_md(path: Path, rel: str) -> bytes:
    """Bounded before it is read: fstat first, a regular file only, at most the limit + 1
    bytes (a sparse 1 GiB SKILL.md was read whole, 1 GiB of RSS, then refused)."""
    try:
        return limits.read_regular_file(
            path, limits.MAX_SKILL_MD_BYTES, what="SKILL.md", error=LimitExceededError
        )
    except LimitExceededError as exc:
        raise LimitExceededError(
            exc.message.replace(str(path), rel, 1),
            hint=exc.hint
            or f"a SKILL.md is read whole: keep it under {limits.MAX_SKILL_MD_BYTES} bytes "
            "and move long material into files it links",
        ) from None
