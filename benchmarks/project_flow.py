"""The project workflow as a new user runs it (issue 24): `init`, `add`, `search`, a no-op
`sync`, `sync --locked` and `ci` in a fresh project, one command each and no flags, from a
synthetic folder registry the global config names. Then the same `list` in the global home
and in a project five folders down (what discovery costs per command).

    python benchmarks/project_flow.py [--runs 3]

Prints one row per command: the median wall time of real processes (interpreter start-up
included). Quote the machine's load with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.registry import build_registry, sample_packages  # noqa: E402


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise SystemExit(f"ontoskills {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return time.perf_counter() - t0


def one_run(tmp: Path) -> dict[str, float]:
    reg = build_registry(tmp / "reg", sample_packages())
    home = tmp / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[registries.local]\nurl = "{reg}"\n')
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "ONTOSKILLS_HOME": str(home),
        "ONTOSKILLS_CACHE_DIR": str(tmp / "cache"),
        "NO_COLOR": "1",
    }
    proj = tmp / "proj"
    proj.mkdir()
    deep = proj / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    out: dict[str, float] = {}
    steps = [
        ("init", ["init"], proj),
        ("add acme/devtools", ["add", "acme/devtools"], proj),
        ('search "debug failing tests"', ["search", "debug failing tests"], proj),
        ("sync (nothing to do)", ["sync"], proj),
        ("sync --locked", ["sync", "--locked"], proj),
        ("ci", ["ci"], proj),
        ("list (global home, -g)", ["-g", "list"], proj),
        ("list (project, 5 folders down)", ["list"], deep),
    ]
    for name, args, cwd in steps:
        out[name] = _run(args, cwd, env)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    results: dict[str, list[float]] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            for name, seconds in one_run(Path(tmp)).items():
                results.setdefault(name, []).append(seconds)
    load = os.getloadavg()[0]
    print(f"project workflow, {runs} runs, load average {load:.1f}")
    print(f"{'command':34} {'median s':>9}")
    for name, values in results.items():
        print(f"{name:34} {statistics.median(values):9.2f}")


if __name__ == "__main__":
    main()
