"""Rules for names and paths that come from untrusted registries.

Everything a registry sends us is untrusted: package ids, skill ids, manifest paths. These
checks fail closed and raise UnsafePathError (exit 4) with the offending value quoted.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from .errors import UnsafePathError, UsageError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
MAX_PATH_LEN = 1024
MAX_SEGMENT_BYTES = 255

# Characters that render invisibly or reorder text: a classic way to hide instructions
# from a human reviewer while an agent still reads them.
_HIDDEN_RANGES = (
    (0x200B, 0x200F),  # zero-width space/joiners, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x2069),  # bidi isolates
    (0xFEFF, 0xFEFF),  # zero-width no-break space
    (0xE0000, 0xE007F),  # tag characters
)
_HIDDEN_RE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _HIDDEN_RANGES) + "]")


def is_valid_name(name: object) -> bool:
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


def check_name(name: object, what: str) -> str:
    """Validate one id segment (author, package or skill name)."""
    if not is_valid_name(name):
        raise UnsafePathError(
            f"invalid {what} {name!r}: must match {NAME_RE.pattern}",
        )
    assert isinstance(name, str)
    return name


def split_package_id(package_id: object, what: str = "package id") -> tuple[str, str]:
    if not isinstance(package_id, str) or package_id.count("/") != 1:
        raise UnsafePathError(f"invalid {what} {package_id!r}: expected 'author/package'")
    author, name = package_id.split("/")
    return check_name(author, f"author in {what}"), check_name(name, f"package in {what}")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Parse a user's install spec: 'author/pkg' or 'author/pkg/skill'.

    Returns (package_id, skill_or_None). User typos are usage errors (exit 2), not
    integrity errors, because nothing untrusted is involved.
    """
    parts = spec.strip().split("/")
    if len(parts) not in (2, 3) or not all(is_valid_name(p) for p in parts):
        raise UsageError(
            f"invalid package spec {spec!r}",
            hint="use author/package or author/package/skill (lowercase, digits, . _ -)",
        )
    return f"{parts[0]}/{parts[1]}", (parts[2] if len(parts) == 3 else None)


def check_relpath(path: object, what: str = "path") -> str:
    """Validate a relative POSIX path from a manifest; return it unchanged.

    Refuses: non-strings, empty, NUL and control characters, backslashes, absolute paths,
    drive letters, URL schemes, '.', '..' and empty segments, overlong paths.
    """
    if not isinstance(path, str) or not path:
        raise UnsafePathError(f"unsafe {what} {path!r}: expected a non-empty relative path")
    if len(path) > MAX_PATH_LEN:
        raise UnsafePathError(f"unsafe {what}: longer than {MAX_PATH_LEN} characters")
    if _CONTROL_RE.search(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: control character")
    if "\\" in path:
        raise UnsafePathError(f"unsafe {what} {path!r}: backslash (paths must be POSIX)")
    if not path.isascii():
        try:  # JSON "\ud800" decodes to a lone surrogate that no filesystem can name
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise UnsafePathError(f"unsafe {what} {path!r}: not valid Unicode") from None
    if path.startswith("/") or _SCHEME_RE.match(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: absolute path or URL not allowed")
    if _HIDDEN_RE.search(path):
        raise UnsafePathError(f"unsafe {what} {path!r}: invisible or bidi characters")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise UnsafePathError(f"unsafe {what} {path!r}: '{segment or '//'}' segment")
        # a UTF-8 character is at most 4 bytes: only long segments need encoding
        if len(segment) * 4 > MAX_SEGMENT_BYTES and len(segment.encode()) > MAX_SEGMENT_BYTES:
            raise UnsafePathError(f"unsafe {what} {path!r}: segment too long")
    return path


def safe_join(root: Path, relpath: str, what: str = "path") -> Path:
    """Join a validated relative path under root and prove it stays there.

    The containment check resolves symlinks on the existing part of the path, so a symlinked
    parent planted inside root cannot redirect writes elsewhere.
    """
    check_relpath(relpath, what)
    target = root.joinpath(*relpath.split("/"))
    real_root = os.path.realpath(root)
    real_target = os.path.realpath(target)
    if os.path.commonpath([real_root, real_target]) != real_root:
        raise UnsafePathError(f"unsafe {what} {relpath!r}: resolves outside {root}")
    return target


def find_hidden_unicode(text: str) -> list[str]:
    """Return the code points (as U+XXXX) of invisible/bidi characters in text."""
    return [f"U+{ord(m):04X}" for m in _HIDDEN_RE.findall(text)]


def strip_hidden_unicode(text: str) -> str:
    return _HIDDEN_RE.sub("", text)


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)
