"""What the sparse-index tier check costs (sources/sparse.py `client_tier`).

A client never trusts a sparse entry above what index.json says for that package, so a
lookup whose answer could be above `community` also reads (once per command) the full
index.json; an answer capped at `community` (an ad-hoc registry, a community package) does
not. This prints `resolve()` of one package from a sparse folder registry in a fresh
interpreter, for each case, at growing registry sizes:

    python benchmarks/sparse_tier.py [--sizes 1000,10000,100000] [--repeat 3]

Cases: `ad-hoc` (--registry PATH, capped at community: no confirmation), `configured,
community package` (the entry says community: no confirmation), `configured, official
package` (the entry says official: index.json is read and parsed to confirm it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.growth import synth_registry  # noqa: E402
from ontoskills.sources.sparse import write_sparse_index  # noqa: E402

RESOLVE = """
import sys, time
from pathlib import Path
from ontoskills.config import Config
from ontoskills.registries import RegistryConfig
from ontoskills.install.resolve import resolve
from ontoskills.install.session import Session
from ontoskills.paths import Cache, Home
from ontoskills.sources import SourceOptions
reg, work, pid, configured = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
home, cache = Home(work / "home"), Cache(work / "cache")
config = Config(path=home.config_file)
if configured:
    config.registries = [RegistryConfig("mine", reg, "folder")]
s = Session(home=home, cache=cache, config=config, lockfile_path=home.default_lockfile,
            options=SourceOptions(cache=cache), registry_override=None if configured else reg)
t = time.perf_counter()
plan = resolve(s, pid, skills=None, requested=[pid], with_embeddings=False)
print(f"{time.perf_counter() - t:.4f} {plan.trust_tier}")
"""

CASES = (
    ("ad-hoc, official in index", "acme/devtools", "0"),
    ("configured, community package", "acme/design", "1"),
    ("configured, official package", "acme/devtools", "1"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'packages':>9}  {'case':<32} {'tier':<10} {'resolve s (median)':>18}")
    with tempfile.TemporaryDirectory(prefix="ontoskills-sparse-tier-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            reg = synth_registry(Path(tmp) / f"reg-{n}", n)
            write_sparse_index(reg)
            for label, pid, configured in CASES:
                times, tier = [], ""
                for i in range(args.repeat):
                    work = Path(tmp) / f"w-{n}-{pid.replace('/', '-')}-{configured}-{i}"
                    out = subprocess.run(
                        [sys.executable, "-c", RESOLVE, str(reg), str(work), pid, configured],
                        env={**os.environ, "PYTHONPATH": str(REPO)},
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.split()
                    times.append(float(out[0]))
                    tier = out[1]
                print(f"{n:>9}  {label:<32} {tier:<10} {statistics.median(times):>18.3f}")


if __name__ == "__main__":
    main()
