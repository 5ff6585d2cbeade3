"""`link --agent claude` over the three real SKILL.md repositories (shared/skillmd-repos):
each packed with `pack --from-skill-md`, published to one folder registry, installed in a
fresh home; then link, link again (nothing to do), disable/enable one package (the mutation
hook keeps the folder in step) and unlink, each through the real CLI (a process each: the
times include interpreter start-up, ~0.5 s).

    python benchmarks/link.py [SKILLMD_REPOS_DIR]     # default: ../shared/skillmd-repos

Prints one table: step, wall seconds, what the agent folder holds after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPOS = {
    "anthropics__skills": "anthropics/skills",
    "obra__superpowers": "obra/superpowers",
    "vercel-labs__agent-skills": "vercel-labs/agent-skills",
}


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "skillmd-repos"
    if not src.is_dir():
        sys.exit(f"no SKILL.md repositories at {src}")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        env = {
            **os.environ,
            "ONTOSKILLS_HOME": str(tmp / "home"),
            "ONTOSKILLS_CACHE_DIR": str(tmp / "cache"),
            "HOME": str(tmp / "user"),
            "NO_COLOR": "1",
            "PYTHONPATH": str(REPO),
        }
        project = tmp / "project"
        project.mkdir()

        def cli(*args: str) -> tuple[float, str]:
            t = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "ontoskills", *args],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                sys.exit(f"ontoskills {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
            return time.perf_counter() - t, proc.stdout

        cli("registry", "init", str(tmp / "reg"), "--no-git")
        for folder, pid in REPOS.items():
            out = tmp / "pkg" / folder
            cli(
                "pack",
                "--from-skill-md",
                str(src / folder / "skills"),
                "--out",
                str(out),
                "--id",
                pid,
                "--version",
                "1.0.0",
            )
            cli("publish", str(out), "--registry", str(tmp / "reg"))
        cli("registry", "add", "skillmd", str(tmp / "reg"))
        rows = [("install the three packages", cli("install", *REPOS.values())[0])]
        steps = [
            ("link --agent claude (first)", ("link", "--agent", "claude", "--json")),
            ("link --agent claude (again: unchanged)", ("link", "--agent", "claude", "--json")),
            ("disable obra/superpowers (hook removes 14)", ("disable", "obra/superpowers")),
            ("enable obra/superpowers (hook writes 14)", ("enable", "obra/superpowers")),
            ("unlink --agent claude", ("unlink", "--agent", "claude", "--json")),
        ]
        target = project / ".claude" / "skills"
        for label, args in steps:
            seconds, stdout = cli(*args)
            rows.append((label, seconds))
            held = sorted(os.listdir(target)) if target.is_dir() else []
            files = sum(1 for p in target.rglob("*") if p.is_file()) if target.is_dir() else 0
            note = f"{len(held)} skill folders, {files} files"
            if stdout.strip() and args[0] == "link":
                doc = json.loads(stdout)
                note += f"; listing {doc['listing_chars']:,} of {doc['listing_budget']:,} chars"
            rows[-1] = (f"{label} -> {note}", seconds)
    width = max(len(r[0]) for r in rows)
    print(f"{'step'.ljust(width)}  seconds")
    for label, seconds in rows:
        print(f"{label.ljust(width)}  {seconds:7.2f}")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
