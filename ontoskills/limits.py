"""Size and count limits applied to everything a registry sends.

Generous for real packages (the largest real OntoStore file is ~160 KB, the largest package
~3 MB), tight enough that a hostile registry cannot fill a disk or exhaust memory.
Override with ONTOSKILLS_MAX_FILE_MB / ONTOSKILLS_MAX_PACKAGE_MB when a registry needs more.
"""

from __future__ import annotations

import os


def _mb(env: str, default: int) -> int:
    try:
        return int(os.environ.get(env, default)) * 1024 * 1024
    except ValueError:
        return default * 1024 * 1024


MAX_FILE_BYTES = _mb("ONTOSKILLS_MAX_FILE_MB", 64)
MAX_PACKAGE_BYTES = _mb("ONTOSKILLS_MAX_PACKAGE_MB", 512)
MAX_PACKAGE_FILES = 10_000
MAX_INDEX_BYTES = 256 * 1024 * 1024
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_INTENTS_BYTES = 64 * 1024 * 1024
MAX_SKILLS_PER_PACKAGE = 5_000
