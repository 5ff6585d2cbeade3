"""Size and count limits applied to everything a registry sends.

Generous for real packages (the largest real OntoStore file is ~160 KB, the largest package
~3 MB), tight enough that a hostile registry cannot fill a disk or exhaust memory.
Override with ONTOSKILLS_MAX_FILE_MB / ONTOSKILLS_MAX_PACKAGE_MB when a registry needs more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import envvars
from .errors import OntoskillsError


def _mb(env: str) -> int:
    # lenient at import: the CLI entry has already refused a malformed value (exit 2)
    return int(envvars.get_lenient(env)) * 1024 * 1024


MAX_FILE_BYTES = _mb(envvars.MAX_FILE_MB)
MAX_PACKAGE_BYTES = _mb(envvars.MAX_PACKAGE_MB)
MAX_PACKAGE_FILES = 10_000
MAX_INDEX_BYTES = 256 * 1024 * 1024
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_INTENTS_BYTES = 32 * 1024 * 1024  # the largest real one is ~120 KB
MAX_SKILLS_PER_PACKAGE = 5_000
# Intents the catalog indexes per skill (text, and vectors besides the description's): the
# full OntoStore's most is 253 (a skill of 74 modules); 100,000 made every search
# ranking that skill take seconds (docs/SEARCH.md).
MAX_INTENTS_PER_SKILL = 1_000
MAX_LOCKFILE_BYTES = 64 * 1024 * 1024  # ~400k locked files; tomllib parses ~10 MB/s
MAX_CONFIG_BYTES = 1024 * 1024
# Every string of a lock (URLs, versions, specs, keys; paths are held to 1024 bytes by
# safety.py): a URL thousands of characters long is no registry's, and cyclonedx's URL
# validation is super-linear in it (64 KB: 35 s and 1.1 GB in `lock export`).
MAX_LOCK_STRING = 2048
# SKILL.md (`pack --from-skill-md`, docs/PUBLISHING.md): read whole, then markdown and Turtle;
# real ones are a few KB (the Agent Skills guidance: under 500 lines).
MAX_SKILL_MD_BYTES = 4 * 1024 * 1024
MAX_FRONTMATTER_BYTES = 64 * 1024  # its YAML header; the served SKILL.md uses the same bound
# JSON values (containers + keys + scalars) a document may create: bounds parse memory
# whatever the byte size (a few MB of `[{},{},...]` would otherwise build ~60 B per 3 bytes).
MAX_JSON_ITEMS = 1_000_000
MAX_INDEX_ITEMS = 4_000_000  # a 100,000-package index.json is ~0.8 M (benchmarks/growth.py)
# intents.json: real files hold tens of 384-float vectors; these bound a hostile one.
MAX_INTENT_VECTORS = 20_000
MAX_INTENT_DIMENSION = 4096
MAX_INTENT_FLOATS = 2_000_000  # per file: ~64 MB of Python floats at most
MAX_INTENTS_ITEMS = MAX_INTENT_FLOATS + 8 * MAX_INTENT_VECTORS


def read_regular_file(
    path: Path, max_bytes: int, *, what: str, error: type[OntoskillsError]
) -> bytes:
    """Bytes of a file we were pointed at (lockfile, config): only a regular file, bounded.

    `--lockfile /dev/zero` would read forever and a FIFO would block open() itself: open
    non-blocking, refuse anything fstat does not call a regular file, and never read more
    than max_bytes + 1 even if the file grows. FileNotFoundError is left to the caller.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(
                f"{path}: the {what} is not a regular file",
                hint=f"point it at an ordinary {what} file",
            )
        if st.st_size > max_bytes:
            raise error(f"{path}: the {what} is {st.st_size} bytes, over the {max_bytes} limit")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise error(f"{path}: the {what} grew past the {max_bytes} byte limit")
        return b"".join(chunks)
    finally:
        os.close(fd)
