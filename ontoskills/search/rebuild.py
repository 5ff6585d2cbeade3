"""Build the search snapshot in a child process, for long-lived processes (the server).

A build parses every installed Turtle module (pyoxigraph), tokenizes every skill and may
run the encoder: tens of MB of short-lived allocations that a Python process does not hand
back to the system (arenas, malloc fragmentation across worker threads). In `serve`, each
install made while it runs used to leave ~2.5 MB behind after a first ~90 MB step
(docs/PERFORMANCE.md). The child opens the same home the same way (`SkillService`, which
saves the snapshot when the tree is settled) and exits; the server reads the snapshot back
like at start-up, so it only ever holds what a snapshot holds.

    python -m ontoskills.search.rebuild HOME LOCKFILE CONFIG VERIFY
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..config import Config
from ..paths import Home

TIMEOUT = 1800.0  # a build of 10k skills takes minutes on a loaded 2-core machine


def rebuild_elsewhere(home: Home, lockfile: Path, config: Config, verify: str) -> bool:
    """Run the build in a child; True when it finished (the caller reads the snapshot)."""
    cmd = [
        sys.executable,
        "-m",
        "ontoskills.search.rebuild",
        str(home.root),
        str(lockfile),
        str(config.path),
        verify,
    ]
    try:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def main(argv: list[str]) -> int:
    from ..config import load_config
    from .service import SkillService

    root, lockfile, config_path, verify = argv
    home = Home(Path(root))
    SkillService(home, Path(lockfile), load_config(Path(config_path)), verify=verify)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
