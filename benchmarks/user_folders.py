"""Issue 22 classes 1 and 6: what `pack --out` and `cache clean` do to folders a user names.

    python benchmarks/user_folders.py [--code DIR]

Each case builds its folders in a fresh temp dir, runs the real CLI once (a subprocess,
PYTHONPATH=--code, default this checkout: point it at an extracted older commit to measure
the code before, `git archive <commit> | tar -x -C DIR`), and reports the exit code, whether
every user file is byte-identical afterwards, the bytes the command left on disk under the
output folder, and the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# CLI arguments, extra environment, folders that must stay byte-identical, the output folder
Setup = tuple[list[str], dict[str, str], list[Path], Path | None]
SKILL = "---\nname: {n}\ndescription: Do {n} things\n---\n# {n}\n\nUse it.\n"


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    out = {}
    for p in sorted(root.rglob("*")) if root.exists() else []:
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(root).as_posix()] = (p.stat().st_mode, p.read_bytes())
    return out


def _disk(root: Path) -> int:
    """Bytes actually allocated under root (a sparse file counts what it holds)."""
    total = 0
    for p in root.rglob("*") if root.exists() else []:
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_blocks * 512
    return total


def _source(root: Path) -> Path:
    for n in ("lint", "format"):
        (root / n).mkdir(parents=True)
        (root / n / "SKILL.md").write_text(SKILL.format(n=n))
    (root / "package.json").write_text('{"package_id": "acme/tools", "version": "1.0.0"}\n')
    return root


def _project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "my-app"}\n')
    (root / "src/index.js").write_text("console.log(1)\n")
    return root


Case = Callable[[Path], Setup]


def pack_into_project(t: Path) -> Setup:
    src, out = _source(t / "src"), _project(t / "my-app")
    return ["pack", "--from-skill-md", str(src), "--out", str(out)], {}, [src, out], None


def pack_out_parent_of_src(t: Path) -> Setup:
    out = _project(t / "my-app")
    src = _source(out / "skills")
    return ["pack", "--from-skill-md", str(src), "--out", str(out)], {}, [out], None


def pack_out_installed_package(t: Path) -> Setup:
    pkg = t / "home/ontologies/author/acme/tools"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text('{"package_id": "acme/tools"}\n')
    src = _source(t / "src")
    return ["pack", "--from-skill-md", str(src), "--out", str(pkg)], {}, [t / "home"], None


def cache_is_home(t: Path) -> Setup:
    home = t / "home"
    (home / "state").mkdir(parents=True)
    (home / "ontoskills.lock").write_text("lock_version = 1\n")
    return ["cache", "clean"], {"ONTOSKILLS_CACHE_DIR": str(home)}, [home], None


def cache_is_user_home(t: Path) -> Setup:
    user = t / "user"
    (user / "code").mkdir(parents=True)
    (user / "notes.txt").write_text("mine\n")
    env = {"ONTOSKILLS_CACHE_DIR": str(user), "HOME": str(user)}
    return ["cache", "clean"], env, [user], None


def cache_with_user_files(t: Path) -> Setup:
    work = t / "work"
    (work / "blobs").mkdir(parents=True)
    (work / "thesis.tex").write_text("\\begin{document}\n")
    return ["cache", "clean"], {"ONTOSKILLS_CACHE_DIR": str(work)}, [work], None


def cache_parent_of_lock(t: Path) -> Setup:
    proj = t / "proj"
    proj.mkdir()
    (proj / "ontoskills.lock").write_text("lock_version = 1\n")
    env = {"ONTOSKILLS_CACHE_DIR": str(proj), "ONTOSKILLS_LOCKFILE": str(proj / "ontoskills.lock")}
    return ["cache", "clean"], env, [proj], None


def sparse_1gib(t: Path) -> Setup:
    src = _source(t / "src")
    with open(src / "lint/asset.bin", "wb") as fh:
        fh.truncate(1 << 30)
    out = t / "out"
    return ["pack", "--from-skill-md", str(src), "--out", str(out)], {}, [src], out


def setuid_mode(t: Path) -> Setup:
    src = _source(t / "src")
    os.chmod(src / "lint/SKILL.md", 0o4777)
    out = t / "out"
    return ["pack", "--from-skill-md", str(src), "--out", str(out)], {}, [src], out


CASES: dict[str, Case] = {
    "pack --out a project with package.json": pack_into_project,
    "pack --out a parent of SRC": pack_out_parent_of_src,
    "pack --out an installed package": pack_out_installed_package,
    "cache clean, CACHE_DIR = the home": cache_is_home,
    "cache clean, CACHE_DIR = $HOME": cache_is_user_home,
    "cache clean, CACHE_DIR with user files": cache_with_user_files,
    "cache clean, CACHE_DIR = lock's parent": cache_parent_of_lock,
    "pack --out, 1 GiB sparse asset": sparse_1gib,
    "pack --out, a 04777 file": setuid_mode,
}


def run(code: Path) -> list[dict[str, object]]:
    rows = []
    for name, case in CASES.items():
        with tempfile.TemporaryDirectory(prefix="user-folders-") as tmp:
            t = Path(tmp)
            args, env, kept, out = case(t)
            before = [_tree(k) for k in kept]
            full_env = {
                **os.environ,
                "PYTHONPATH": str(code),
                "ONTOSKILLS_HOME": str(t / "home"),
                "ONTOSKILLS_CACHE_DIR": str(t / "cache"),
                "NO_COLOR": "1",
                **env,
            }
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "ontoskills", *args],
                env=full_env,
                cwd=tmp,  # `-m` puts the working directory first on sys.path: not a checkout
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - start
            intact = all(_tree(k) == b for k, b in zip(kept, before, strict=True))
            modes = sorted({m & 0o7777 for m, _ in _tree(out).values()}) if out else []
            rows.append(
                {
                    "case": name,
                    "exit": proc.returncode,
                    "user files intact": intact,
                    "left under --out (MB)": round(_disk(out) / 1e6, 1) if out else None,
                    "modes written": [oct(m) for m in modes],
                    "wall s": round(wall, 2),
                    "error": proc.stderr.strip().splitlines()[-2:] if proc.returncode else [],
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, default=REPO, help="checkout to run")
    for row in run(parser.parse_args().code):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
