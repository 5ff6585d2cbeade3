"""The manifests reference OntoSkills servers read: `system/index.{enabled,installed}.ttl`.

The reference runtime (OntoMCP) loads `system/index.enabled.ttl` and follows its
`owl:imports`. Writing both files after every change keeps an installed home usable by those
servers as well as by ours. They are derived machine state (absolute file: IRIs), rebuilt
from the lock; serialised with pyoxigraph so no path can inject Turtle.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from ..fsutil import atomic_write_bytes, make_dirs, remove_file
from ..lockfile import Lockfile
from ..manifest import parse_manifest
from ..paths import Home
from ..skillheader import DCTERMS, ONTOLOGY_IRI, OWL, RDF_TYPE

INDEX_IRI = ox.NamedNode(ONTOLOGY_IRI)


def _modules(home: Home, lock: Lockfile) -> tuple[list[Path], list[Path]]:
    """(enabled, installed) modules; each manifest parsed once for both (a manifest can be
    16 MB: parsing it per list doubled the cost of every install's last step)."""
    enabled: list[Path] = []
    installed: list[Path] = []
    for pid, pkg in sorted(lock.packages.items()):
        root = home.package_dir(pid)
        manifest_path = root / "package.json"
        if not manifest_path.is_file():
            continue
        manifest = parse_manifest(manifest_path.read_bytes(), source=str(manifest_path))
        on = {s for s, flag in pkg.skills.items() if flag}
        for f in pkg.files:
            if not f.path.endswith(".ttl"):
                continue
            owner = manifest.owner_of(f.path)
            path = root.joinpath(*f.path.split("/"))
            if (owner is None and pkg.skills) or (owner is not None and owner.id in pkg.skills):
                installed.append(path)
            if (owner is None and on) or (owner is not None and owner.id in on):
                enabled.append(path)
    return enabled, installed


def _local_modules(home: Home) -> list[Path]:
    if not home.ontologies.is_dir():
        return []
    skip = {home.author_dir, home.system_dir}
    return sorted(
        p
        for p in home.ontologies.rglob("ontoskill.ttl")
        if not any(s == p or s in p.parents for s in skip) and not p.is_symlink()
    )


def _render(title: str, modules: list[Path]) -> bytes:
    triples = [
        ox.Triple(INDEX_IRI, ox.NamedNode(RDF_TYPE), ox.NamedNode(OWL + "Ontology")),
        ox.Triple(INDEX_IRI, ox.NamedNode(DCTERMS + "title"), ox.Literal(title)),
    ]
    for path in modules:
        triples.append(
            ox.Triple(INDEX_IRI, ox.NamedNode(OWL + "imports"), ox.NamedNode(path.as_uri()))
        )
    return (
        ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes={"owl": OWL, "dcterms": DCTERMS})
        or b""
    )


_PENDING = "reference-indexes.pending"  # in state/: the pair may lag behind the lock


def mark_reference_indexes_pending(home: Home) -> None:
    """Set before a command can change the lock: until `write_reference_indexes` has
    written both files from the new lock, a kill leaves this note for the next command."""
    make_dirs(home.state_dir)
    atomic_write_bytes(home.state_dir / _PENDING, b"")


def clear_reference_indexes_pending(home: Home) -> None:
    remove_file(home.state_dir / _PENDING)


def reference_indexes_pending(home: Home) -> bool:
    """May the two files lag behind the lock (a command was killed after its commit)?"""
    return (home.state_dir / _PENDING).exists()


def write_reference_indexes(home: Home, lock: Lockfile) -> bool:
    """Write both files from the lock, then clear the pending note; a file that already
    holds these bytes is left alone (no new inode). True when something was rewritten."""
    local = _local_modules(home)
    enabled, installed = _modules(home, lock)
    wanted = {
        "index.enabled.ttl": _render("OntoSkills enabled skills", enabled + local),
        "index.installed.ttl": _render("OntoSkills installed skills", installed + local),
    }
    stale = {
        name: data
        for name, data in wanted.items()
        if not (
            (home.system_dir / name).is_file()
            and not (home.system_dir / name).is_symlink()
            and (home.system_dir / name).read_bytes() == data
        )
    }
    if stale:
        make_dirs(home.system_dir)
        for name, data in stale.items():
            atomic_write_bytes(home.system_dir / name, data)
    clear_reference_indexes_pending(home)
    return bool(stale)
