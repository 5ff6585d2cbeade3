"""Long fuzz run: the property tests of tests/hardening/test_fuzz_parsers.py (registry
files, lockfile, config) and test_fuzz_inputs.py (environment values, Retry-After, git refs,
hidden text, the JSON value budget, path collisions, the serve stdin screen) under the
`slow` hypothesis profile (5,000 examples per property by default instead of 150 in CI).

    python benchmarks/fuzz.py [--examples 5000]

Prints, per property, how many examples ran and how many failed; exit 1 on any failure
(hypothesis prints the minimal failing input above the table).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=5000)
    args = ap.parse_args()
    env = {**os.environ, "HYPOTHESIS_PROFILE": "slow", "FUZZ_EXAMPLES": str(args.examples)}
    t = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--hypothesis-show-statistics",
            "tests/hardening/test_fuzz_parsers.py",
            "tests/hardening/test_fuzz_inputs.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t
    counts: dict[str, list[int]] = {}
    current = None
    for line in proc.stdout.splitlines():
        m = re.match(r".*::(test_\w+):$", line.strip())
        if m:
            current = m.group(1)
            counts.setdefault(current, [0, 0])
        m = re.search(r"(\d+) passing, (\d+) failing", line)
        if m and current:  # one line per phase (explicit examples, generate, shrink)
            counts[current][0] += int(m.group(1))
            counts[current][1] += int(m.group(2))
    rows = [(name, ok, bad) for name, (ok, bad) in counts.items()]
    print(f"{'property':<48}{'examples':>10}{'failing':>9}")
    for name, ok, bad in rows:
        print(f"{name:<48}{ok + bad:>10}{bad:>9}")
    total = sum(ok + bad for _, ok, bad in rows)
    print(f"total {total} examples in {elapsed:.0f} s; pytest exit {proc.returncode}")
    if proc.returncode != 0:
        print(proc.stdout[-5000:])
        sys.exit(1)


if __name__ == "__main__":
    main()
