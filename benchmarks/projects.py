"""One verified store linked into many homes (issue 24, "Numbers"): the real CLI restoring the
same lock (`ci`) into a home from a cold store, then into more homes from the warm store,
and the disk all of them take. A home here is a project's tree (`<project>/.ontoskills` has
the same layout), so the figures hold for projects.

    python benchmarks/projects.py [--registry DIR] [--home DIR] [--homes N] [--packages N]

--registry: a folder registry (default ../shared/ontostore-full; skipped when absent).
--home: the folder the homes, the store and the baseline copy go in (default: a temporary
folder, deleted after); one filesystem, so files can be hardlinks of the store's blobs.
Printed: wall times (one run each, warm homes as a median), their ratios (goal: warm <= 0.4x
cold), the plain copy + sha256 of the same files (what a fresh install is compared with) and
disk (st_blocks of unique inodes; goal: ten homes <= 1.2x one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REGISTRY = REPO.parent / "shared" / "ontostore-full"


def cli(home: Path, cache: Path, *args: str) -> float:
    """Run the real CLI once; returns its wall time (start-up and lock reading included)."""
    env = {**os.environ, "ONTOSKILLS_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    env.pop("ONTOSKILLS_LOCKFILE", None)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"ontoskills {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return took


def package_ids(registry: Path, limit: int | None) -> list[str]:
    index = json.loads((registry / "index.json").read_bytes())
    ids = sorted(p["package_id"] for p in index["packages"])
    return ids[:limit] if limit else ids


def copy_and_hash(registry: Path, lock: dict[str, list[str]], dest: Path) -> float:
    """The baseline: read, sha256 and write each file the lock installs, nothing else."""
    start = time.perf_counter()
    for pid, paths in lock.items():
        for rel in paths:
            data = (registry / "packages" / pid / rel).read_bytes()
            hashlib.sha256(data).hexdigest()
            target = dest / pid / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return time.perf_counter() - start


def locked_files(lock_path: Path) -> dict[str, list[str]]:
    sys.path.insert(0, str(REPO))
    from ontoskills import lockfile

    lock = lockfile.load(lock_path)
    return {pid: [f.path for f in pkg.files] for pid, pkg in lock.packages.items()}


def disk(*roots: Path) -> tuple[int, int]:
    """Bytes allocated under roots, each inode counted once: (regular files, everything).
    Folders are apart: a tree of links still needs its own folders (4 KiB each on ext4)."""
    seen: set[tuple[int, int]] = set()
    files = total = 0
    for root in roots:
        for dirpath, _, filenames in os.walk(root):
            for path in [dirpath, *(os.path.join(dirpath, n) for n in filenames)]:
                st = os.lstat(path)
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_blocks * 512
                    files += st.st_blocks * 512 if stat.S_ISREG(st.st_mode) else 0
    return files, total


def run(registry: Path, work: Path, homes: int, limit: int | None) -> None:
    ids = package_ids(registry, limit)
    seed, store = work / "h-seed", work / "store"
    # the lock every home restores (untimed; a store of its own, deleted after)
    cli(seed, work / "seed-store", "--registry", str(registry), "install", *ids)
    shutil.rmtree(work / "seed-store")
    files = locked_files(seed / "ontoskills.lock")
    n_files = sum(len(v) for v in files.values())
    paths = [work / f"h{i:02d}" for i in range(homes)]
    for home in paths:  # siblings of the seed: the lock's relative registry path holds
        home.mkdir()
        shutil.copy(seed / "ontoskills.lock", home / "ontoskills.lock")
    cold = cli(paths[0], store, "ci")
    one = disk(store, paths[0])
    warm = [cli(home, store, "ci") for home in paths[1:]]
    ten = disk(store, *paths)
    baseline = copy_and_hash(registry, files, work / "copy")
    med = statistics.median(warm) if warm else float("nan")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{len(ids)} packages, {n_files} files; load average {load:.1f}; one run\n")
    print("| measure | value | ratio |")
    print("|---|---|---|")
    print(f"| `ci` into home 1, cold store | {cold:.2f} s | 1.00x |")
    print(f"| `ci` into homes 2..{homes}, warm store (median) | {med:.2f} s | {med / cold:.2f}x |")
    print(f"| plain copy + sha256 of the same files | {baseline:.2f} s | {baseline / cold:.2f}x |")
    print(f"| cold `ci` / plain copy + sha256 | | {cold / baseline:.2f}x |")
    for i, what in enumerate(("regular files", "files and folders")):
        print(f"| disk ({what}): store + 1 home | {one[i] / 1e6:.1f} MB | 1.00x |")
        print(
            f"| disk ({what}): store + {homes} homes | {ten[i] / 1e6:.1f} MB "
            f"| {ten[i] / one[i]:.2f}x |"
        )
    dirs = sum(len(d) for h in paths[:1] for _, d, _ in os.walk(h))
    print(f"\nfolders in one home: {dirs}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", type=Path, default=DEFAULT_REGISTRY)
    ap.add_argument("--home", type=Path, help="work folder (default: a temporary one)")
    ap.add_argument("--homes", type=int, default=10)
    ap.add_argument("--packages", type=int, help="only the first N packages")
    args = ap.parse_args()
    if not (args.registry / "index.json").is_file():
        print(f"skipped: no registry at {args.registry}")
        return
    if args.home is not None:
        args.home.mkdir(parents=True, exist_ok=False)  # never into a folder holding anything
        run(args.registry.resolve(), args.home.resolve(), args.homes, args.packages)
        return
    with tempfile.TemporaryDirectory(prefix="ontoskills-projects-") as tmp:
        run(args.registry.resolve(), Path(tmp), args.homes, args.packages)


if __name__ == "__main__":
    main()
