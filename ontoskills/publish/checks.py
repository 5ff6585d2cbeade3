"""Validation of one package, shared by `publish` (strict) and `registry verify` (lenient).

Checks run over a reader (path -> bytes) and an optional folder listing, so the same code
validates an author's folder, a local registry and a remote one. Each problem becomes a
Finding; strict mode turns the store's tolerated quirks (QUIRKS.md) into errors, lenient
mode reports them as warnings. Each error keeps the exception class the CLI exits with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import limits
from ..errors import (
    FormatError,
    IntegrityError,
    LimitExceededError,
    OntoskillsError,
    UnsafePathError,
)
from ..fsutil import sha256_bytes
from ..intents import parse_intents
from ..manifest import Manifest, parse_manifest
from ..safety import find_hidden_unicode
from ..skillheader import SkillHeader, read_skill_header, readable_text
from .files import MANIFEST

# Models whose output dimension is known: an intents.json claiming another is refused.
KNOWN_DIMENSIONS = {
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "all-MiniLM-L6-v2": 384,
}


@dataclass
class Finding:
    level: str  # "error" | "warning"
    code: str
    message: str
    package: str | None = None
    error: type[OntoskillsError] = field(default=IntegrityError, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "code": self.code,
            "package": self.package,
            "message": self.message,
        }


@dataclass
class PackageCheck:
    package_id: str
    manifest: Manifest | None = None
    modules: dict[str, SkillHeader] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0

    def add(
        self, level: str, code: str, message: str, error: type[OntoskillsError] = IntegrityError
    ) -> None:
        self.findings.append(Finding(level, code, message, self.package_id, error))

    def quirk(
        self, strict: bool, code: str, message: str, error: type[OntoskillsError] = FormatError
    ) -> None:
        self.add("error" if strict else "warning", code, message, error)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]


Reader = Callable[[str], bytes]


def check_package(
    package_id: str,
    manifest_data: bytes,
    read: Reader,
    listing: dict[str, int] | None,
    *,
    strict: bool,
    index_tier: str | None = None,
    stray_is_error: bool = True,
) -> PackageCheck:
    """Validate one package. `listing` maps package-relative paths to sizes (None: HTTP)."""
    pc = PackageCheck(package_id)
    try:
        m = parse_manifest(manifest_data, source=f"{package_id}/{MANIFEST}", expected_id=package_id)
    except OntoskillsError as exc:
        pc.add("error", "manifest", exc.message, type(exc))
        return pc
    pc.manifest = m
    if index_tier and m.declared_tier and m.declared_tier != index_tier:
        pc.quirk(
            strict,
            "declared-tier",
            f"package.json says trust tier {m.declared_tier!r}, the index {index_tier!r}",
        )
    present = set(listing) if listing is not None else None
    if listing is not None:
        _check_sizes(pc, listing)
    if m.files is None:
        pc.quirk(
            strict, "no-hashes", "no `files` array: file hashes cannot be verified", IntegrityError
        )
        known = present if present is not None else set(m.listed_paths())
        unlisted = sorted((present or set()) - set(m.listed_paths()) - {MANIFEST})
        if unlisted:
            pc.quirk(
                strict,
                "unlisted-assets",
                f"{len(unlisted)} files are not in the manifest (e.g. {unlisted[0]}); "
                "clients install the whole folder",
            )
    else:
        known = {f.path for f in m.files}
        if present is not None:
            for path in sorted(present - known - {MANIFEST}):
                pc.add(
                    "error" if stray_is_error else "warning",
                    "stray-file",
                    f"{path} is not listed in `files`",
                    UnsafePathError,
                )
    for path in sorted(set(m.listed_paths()) - known):
        pc.add("error", "missing-file", f"{path} is referenced by package.json but missing")
    if present is not None:
        for path in sorted(known - present):
            pc.add("error", "missing-file", f"{path} is listed but missing")
    cache: dict[str, bytes] = {}

    def get(path: str) -> bytes | None:
        if path not in cache:
            try:
                cache[path] = read(path)
            except OntoskillsError as exc:
                pc.add("error", "unreadable", f"{path}: {exc.message}", type(exc))
                return None
        return cache[path]

    for f in m.files or ():
        data = get(f.path) if present is None or f.path in present else None
        if data is None:
            continue
        pc.files_checked += 1
        if f.sha256 is not None and sha256_bytes(data) != f.sha256:
            pc.add("error", "hash-mismatch", f"{f.path}: sha256 does not match `files`")
        elif f.size is not None and len(data) != f.size:
            pc.add("error", "size-mismatch", f"{f.path}: {len(data)} bytes, `files` says {f.size}")
    _check_modules(pc, m, get, known, strict)
    _check_intents(pc, m, get, known, strict)
    return pc


def _check_sizes(pc: PackageCheck, listing: dict[str, int]) -> None:
    if len(listing) > limits.MAX_PACKAGE_FILES:
        pc.add(
            "error",
            "limits",
            f"{len(listing)} files, over {limits.MAX_PACKAGE_FILES}",
            LimitExceededError,
        )
    for path, size in sorted(listing.items()):
        if size > limits.MAX_FILE_BYTES:
            pc.add(
                "error",
                "limits",
                f"{path} is {size} bytes, over the per-file limit",
                LimitExceededError,
            )
    if sum(listing.values()) > limits.MAX_PACKAGE_BYTES:
        pc.add("error", "limits", "package over the total size limit", LimitExceededError)


def _check_modules(
    pc: PackageCheck, m: Manifest, get: Callable[[str], bytes | None], known: set[str], strict: bool
) -> None:
    for path in m.modules:
        data = get(path) if path in known else None
        if data is None:
            continue
        try:
            pc.modules[path] = read_skill_header(data, f"{pc.package_id}/{path}", lenient=False)
        except OntoskillsError as exc:
            pc.add("error", "turtle", exc.message, type(exc))
            continue
        hidden = find_hidden_unicode(readable_text(data))  # raw, and \u escapes decoded
        if hidden:  # invisible text an agent reads but a reviewer does not see
            pc.quirk(
                strict,
                "hidden-unicode",
                f"{path} contains invisible or bidi characters "
                f"({', '.join(sorted(set(hidden))[:3])})",
                UnsafePathError,
            )
    for s in m.skills:
        info = pc.modules.get(s.path)
        if info is None:
            if s.path not in m.modules and s.path in known:
                pc.add(
                    "error",
                    "skill-module",
                    f"skill {s.id}: {s.path} is not in `modules`",
                    FormatError,
                )
            continue
        if info.identifier != s.id:
            pc.quirk(
                strict,
                "identifier-mismatch",
                f"skill {s.id}: {s.path} has dcterms:identifier {info.identifier!r}",
            )


def _check_intents(
    pc: PackageCheck, m: Manifest, get: Callable[[str], bytes | None], known: set[str], strict: bool
) -> None:
    seen: tuple[str, int] | None = None
    for path in m.embedding_files:
        data = get(path) if path in known else None
        if data is None:
            continue
        try:
            intents = parse_intents(data, source=f"{pc.package_id}/{path}")
        except OntoskillsError as exc:
            pc.add("error", "intents", exc.message, type(exc))
            continue
        expected = KNOWN_DIMENSIONS.get(intents.model)
        if expected is not None and intents.dimension != expected:
            pc.add(
                "error",
                "embedding-dimension",
                f"{path}: model {intents.model} has dimension {expected}, "
                f"file says {intents.dimension}",
                FormatError,
            )
        if seen is not None and seen != (intents.model, intents.dimension):
            pc.add(
                "error",
                "embedding-model",
                f"{path}: {intents.model}/{intents.dimension} differs from "
                f"{seen[0]}/{seen[1]} used elsewhere in the package",
                FormatError,
            )
        seen = seen or (intents.model, intents.dimension)
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        idents = {
            i.identifier
            for p, i in pc.modules.items()
            if p.startswith(folder) and "/" not in p[len(folder) :]
        }
        unknown = sorted({s for v in intents.intents for s in v.skills} - idents)
        if unknown:
            pc.quirk(
                strict,
                "intents-skills",
                f"{path}: vectors name skills with no module in that folder: "
                f"{', '.join(unknown[:5])}",
            )


def first_error(pc: PackageCheck) -> OntoskillsError | None:
    """The first error as the exception the CLI exits with (the rest are counted)."""
    errs = pc.errors
    if not errs:
        return None
    first = errs[0]
    more = f" (and {len(errs) - 1} more problems)" if len(errs) > 1 else ""
    return first.error(
        f"{pc.package_id}: {first.message}{more}",
        hint="fix the package (then `ontoskills pack` it again) and retry",
    )
