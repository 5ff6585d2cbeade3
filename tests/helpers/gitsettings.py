"""Git registries whose own settings try to drop or rewrite what `publish` commits.

Every setting here changes what `git add` (libgit2's `index.add_all` included) stores or
what a checkout writes: `.gitattributes` eol/text/ident/filter rules, `.gitignore` and
`.git/info/exclude` patterns, `core.autocrlf` / `core.safecrlf`. `publish` must commit the exact
bytes it hashed in spite of all of them (docs/PUBLISHING.md). Used by
tests/hardening/test_publish_bytes.py and benchmarks/kill_publish.py (`--kinds hostile`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from ontoskills.publish.pack import pack

# name -> (files committed at the registry root, files under .git, repository config)
HOSTILE_GIT: dict[str, tuple[dict[str, str], dict[str, str], dict[str, str]]] = {
    "eol-crlf": ({".gitattributes": "* text eol=crlf\n"}, {}, {}),
    "text-auto": ({".gitattributes": "* text=auto\n"}, {}, {}),
    "eol-lf": ({".gitattributes": "* text eol=lf\n"}, {}, {}),
    "ident": ({".gitattributes": "* ident\n"}, {}, {}),
    "filter": (
        {".gitattributes": "* filter=evil\n"},
        {},
        {"filter.evil.clean": "tr a-z A-Z", "filter.evil.required": "true"},
    ),
    "gitignore": ({".gitignore": "*\n!.gitignore\n"}, {}, {}),
    "gitignore-dirs": ({".gitignore": "packages/\nindex/\n*.json\n*.ttl\n*.sh\n"}, {}, {}),
    "info-exclude": ({}, {"info/exclude": "*\n"}, {}),
    "autocrlf": ({}, {}, {"core.autocrlf": "true", "core.safecrlf": "true"}),
    "autocrlf-input": ({}, {}, {"core.autocrlf": "input", "core.eol": "crlf"}),
    "export-ignore": ({".gitattributes": "packages/** export-ignore\n"}, {}, {}),
}
ALL = tuple(HOSTILE_GIT)

SIG = pygit2.Signature("Hostile", "hostile@example.invalid", 1_700_000_000, 0)


def make_hostile(reg: Path, names: tuple[str, ...] = ALL) -> None:
    """Apply the named settings to the git registry at `reg` and commit the root files with
    exact bytes (a `git add` would itself be subject to the .gitignore it adds)."""
    repo = pygit2.Repository(str(reg))
    root_files: dict[str, str] = {}
    for name in names:
        committed, internal, config = HOSTILE_GIT[name]
        for rel, text in committed.items():
            root_files[rel] = root_files.get(rel, "") + text
        for rel, text in internal.items():
            path = reg / ".git" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                fh.write(text)
        for key, value in config.items():
            repo.config[key] = value
    if not root_files:
        return
    index = repo.index
    index.read()
    for rel, text in root_files.items():
        (reg / rel).write_text(text, encoding="utf-8")
        oid = repo.create_blob(text.encode())
        index.add(pygit2.IndexEntry(rel, oid, pygit2.enums.FileMode.BLOB))
    index.write()
    tree = index.write_tree()
    repo.create_commit("HEAD", SIG, SIG, "hostile settings", tree, [repo.head.target])


TRICKY_ASSETS: dict[str, tuple[bytes, bool]] = {
    "lint/notes-crlf.md": (b"# notes\r\nwindows line endings\r\n", False),
    "lint/mixed.txt": (b"unix\nwindows\r\nold mac\rend", False),
    "lint/ident.txt": (b"$Id: 0123456789abcdef0123456789abcdef01234567 $\nkept as is\n", False),
    "lint/lower.txt": (b"a filter would upper-case this\n", False),
    "lint/data.bin": (bytes(range(256)) * 4 + b"\r\n\x00\r\n", False),
    "lint/no-newline.ttl.txt": (b"no trailing newline", False),
    "lint/scripts/crlf.sh": (b"#!/bin/sh\r\necho crlf\r\n", True),
}


def add_tricky_assets(pkg: Path) -> Path:
    """Bytes that git's filters would rewrite, added to a packed package (then re-packed)."""
    for rel, (data, executable) in TRICKY_ASSETS.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)
    pack(pkg)
    return pkg
