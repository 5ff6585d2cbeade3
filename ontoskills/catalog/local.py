"""Local skills: `ontoskill.ttl` files under ontologies/ outside author/ and system/."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..manifest import LOCAL_TIER
from ..paths import Home
from ..safety import is_valid_name
from .model import SkillRecord

if TYPE_CHECKING:
    from .builder import Builder

SKIP_TOP = ("author", "system")


def local_skill_files(home: Home) -> list[Path]:
    """Every file under ontologies/ outside author/ and system/ (sorted, no symlinks)."""
    out: list[Path] = []
    top = home.ontologies
    if not top.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        if Path(dirpath) == top:
            dirnames[:] = [d for d in dirnames if d not in SKIP_TOP]
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out.append(p)
    return out


def add_local(b: Builder, files: list[Path]) -> None:
    # Imported here: the service lists local files on every refresh without building.
    from .builder import INTENTS_FILE, ModuleRef, description_of, merge

    top = b.home.ontologies
    mains = [p for p in files if p.name == "ontoskill.ttl" and p.parent != top]
    main_dirs = {p.parent for p in mains}
    # Files of each skill: below its folder but not inside a nested local skill, i.e. the
    # nearest skill folder above the file; found once per file (a scan of every file per
    # skill was O(skills x files)).
    files_of: dict[Path, list[Path]] = {}
    for p in files:
        for d in p.parents:
            if d == top:
                break
            if d in main_dirs:
                files_of.setdefault(d, []).append(p)
                break
    for main in mains:
        folder = main.parent
        rel = folder.relative_to(top)
        group = rel.parts[0]
        label = f"local/{rel.as_posix()}/ontoskill.ttl"
        head = b.header(main, label)
        if head is None:
            continue
        skill = head.identifier if is_valid_name(head.identifier) else folder.name
        if not (is_valid_name(group) and is_valid_name(skill)):
            b.problems.append(f"{label}: folder or identifier is not a valid name; not served")
            continue
        mine = files_of.get(folder, [])
        idx = b.new_record(
            SkillRecord(
                key=f"local/{group}/{skill}",
                package=f"local/{group}",
                skill_id=skill,
                identifier=head.identifier or skill,
                iri=head.iri,
                trust_tier=LOCAL_TIER,
                root=str(folder),
                main_module="ontoskill.ttl",
                description=description_of("", head.description, head.differentia),
                category=head.category,
                nature=head.nature,
                name=head.name or skill,
                aliases=head.aliases,
                intents=head.intents,
                modules=["ontoskill.ttl"],
                content_hash=head.content_hash,
                differentia=head.differentia,
            )
        )
        if idx is None:
            continue
        rec = b.records[idx]
        modules = [ModuleRef("ontoskill.ttl", head, idx)]
        for p in mine:
            relp = p.relative_to(folder).as_posix()
            if p.suffix == ".ttl" and p != main and p.parent == folder:
                sub = b.header(p, f"local/{rel.as_posix()}/{relp}")
                if sub is not None:
                    rec.modules.append(relp)
                    modules.append(ModuleRef(relp, sub, idx))
            elif p.suffix != ".ttl" and p.name != INTENTS_FILE:
                rec.assets.append(relp)
        if len(modules) > 1:  # merged once, not per module (quadratic in a skill's modules)
            rec.aliases = merge(rec.aliases, [a for m in modules[1:] for a in m.header.aliases])
            rec.intents = merge(rec.intents, [i for m in modules[1:] for i in m.header.intents])
        b.cap_intents(idx)
        b.modules.extend(modules)
        if (folder / INTENTS_FILE).is_file():
            b.add_intents_file(
                folder / INTENTS_FILE, f"local/{rel.as_posix()}/{INTENTS_FILE}", modules, idx
            )
