"""Growth: how each cost bends as a registry grows from 1k to 100k packages.

Synthetic registries in the OntoStore format: N index entries (only the packages we touch are
materialised; the rest only need to exist in the index for the index costs to be real).
Every step runs in a fresh interpreter so time and peak RSS are its own:

  parse     read + strict-parse index.json (jsonio + manifest.parse_index)
  resolve   Session.find_package + resolve of one package (folder)
  install   `ontoskills install` of one package, cold cache (folder, HTTP)
  outdated  `ontoskills outdated` with one package installed (HTTP, warm cache: 304)

    python benchmarks/growth.py [--sizes 1000,10000,100000]

See docs/SCALING.md for the curves and what was done where they bend.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills.sources.sparse import write_sparse_index  # noqa: E402
from tests.helpers.faults import FaultServer  # noqa: E402
from tests.helpers.registry import build_registry, sample_packages  # noqa: E402

TARGET = "acme/devtools"


def synth_registry(root: Path, n: int) -> Path:
    """sample_packages() materialised + n synthetic index entries (authors of 100 packages)."""
    build_registry(root, sample_packages())
    index = json.loads((root / "index.json").read_text())
    tiers = ("official", "verified", "community")
    for i in range(n - len(index["packages"])):
        author, pkg = f"author{i // 100:05d}", f"package-{i % 100:03d}"
        index["packages"].append(
            {
                "package_id": f"{author}/{pkg}",
                "trust_tier": tiers[i % 3],
                "source_kind": "ontology",
                "manifest_path": f"packages/{author}/{pkg}/package.json",
            }
        )
    (root / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return root


# ru_maxrss of a child counts the parent's pages at fork time (Linux keeps the pre-exec
# high-water mark), and this parent holds a 100k-entry registry. So each child reports its
# own VmHWM at exit through a sitecustomize hook instead.
SITECUSTOMIZE = """
import atexit, os
def _hwm():
    path = os.environ.get("GROWTH_HWM_FILE")
    if path:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                open(path, "w").write(line.split()[1])
atexit.register(_hwm)
"""


def measure(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of a child process."""
    hwm = Path(env["GROWTH_HOOK_DIR"]) / "hwm"
    hwm.unlink(missing_ok=True)
    t = time.perf_counter()
    proc = subprocess.run(
        args,
        env={**env, "GROWTH_HWM_FILE": str(hwm)},
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{proc.stderr.decode()}")
    return wall, int(hwm.read_text()) / 1024, proc.stdout.decode()


PARSE = """
import sys, time
from pathlib import Path
from ontoskills.manifest import parse_index
data = Path(sys.argv[1]).read_bytes()
t = time.perf_counter()
idx = parse_index(data, source="index.json")
print(f"{time.perf_counter() - t:.4f} {len(idx)}")
"""

RESOLVE = """
import sys, time
from pathlib import Path
from ontoskills.config import Config
from ontoskills.install.resolve import resolve
from ontoskills.install.session import Session
from ontoskills.paths import Cache, Home
from ontoskills.sources import SourceOptions
work = Path(sys.argv[2]); home = Home(work / "home-r"); cache = Cache(work / "cache-r")
s = Session(home=home, cache=cache, config=Config(path=home.config_file),
            lockfile_path=home.default_lockfile, options=SourceOptions(cache=cache),
            registry_override=sys.argv[1])
t = time.perf_counter()
plan = resolve(s, "acme/devtools", skills=None, requested=["acme/devtools"], with_embeddings=False)
print(f"{time.perf_counter() - t:.4f} {len(plan.files)}")
"""


def python_baseline(env: dict[str, str]) -> float:
    return measure([sys.executable, "-c", "import ontoskills.manifest"], env)[1]


def row(n: int, work: Path, env: dict[str, str]) -> dict[str, float]:
    reg = synth_registry(work / f"reg-{n}", n)
    out: dict[str, float] = {"n": n, "index_mb": (reg / "index.json").stat().st_size / 1e6}
    _, rss, text = measure([sys.executable, "-c", PARSE, str(reg / "index.json")], env)
    out["parse_s"], out["parse_rss"] = float(text.split()[0]), rss
    for sparse in (False, True):
        tag = "sparse_" if sparse else ""
        if sparse:
            t = time.perf_counter()
            write_sparse_index(reg)
            out["sparse_write_s"] = time.perf_counter() - t
        _, rss, text = measure([sys.executable, "-c", RESOLVE, str(reg), str(work / tag)], env)
        out[f"{tag}resolve_s"], out[f"{tag}resolve_rss"] = float(text.split()[0]), rss
        with FaultServer(reg) as srv:
            for kind, url in (("folder", str(reg)), ("http", srv.url)):
                home = work / f"home-{tag}{kind}-{n}"
                cache = work / f"cache-{tag}{kind}-{n}"
                e = {**env, "ONTOSKILLS_HOME": str(home), "ONTOSKILLS_CACHE_DIR": str(cache)}
                cli = [sys.executable, "-m", "ontoskills", "--registry", url]
                wall, rss, _ = measure([*cli, "install", TARGET], e)
                out[f"{tag}install_{kind}_s"], out[f"{tag}install_{kind}_rss"] = wall, rss
                if kind == "http":
                    wall, rss, _ = measure([*cli, "outdated", "--json"], e)
                    out[f"{tag}outdated_s"], out[f"{tag}outdated_rss"] = wall, rss
            out[f"{tag}http_requests"] = len(srv.requests)
    shutil.rmtree(reg)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ontoskills-growth-") as tmp:
        hook = Path(tmp) / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env = {
            **os.environ,
            "PYTHONPATH": f"{hook}{os.pathsep}{REPO}",
            "GROWTH_HOOK_DIR": str(hook),
            "NO_COLOR": "1",
        }
        base_rss = python_baseline(env)
        rows = [row(int(n), Path(tmp), env) for n in args.sizes.split(",")]
    print(f"python + ontoskills import: {base_rss:.0f} MB RSS")
    cols = [
        ("packages", "n", "{:>9.0f}"),
        ("index MB", "index_mb", "{:>9.1f}"),
        ("parse s", "parse_s", "{:>8.2f}"),
        ("parse MB", "parse_rss", "{:>9.0f}"),
    ]
    per = [
        ("resolve s", "resolve_s", "{:>10.2f}"),
        ("inst fold s", "install_folder_s", "{:>12.2f}"),
        ("inst http s", "install_http_s", "{:>12.2f}"),
        ("inst MB", "install_http_rss", "{:>8.0f}"),
        ("outdated s", "outdated_s", "{:>11.2f}"),
        ("outd MB", "outdated_rss", "{:>8.0f}"),
        ("requests", "http_requests", "{:>9.0f}"),
    ]
    for title, tag in (("full index.json", ""), ("sparse index", "sparse_")):
        print(f"\n{title}:")
        table = cols + [(h, tag + k, f) for h, k, f in per]
        if tag:
            table.append(("write s", "sparse_write_s", "{:>8.2f}"))
        print("".join(f"{h:>{len(f.format(0))}}" for h, _, f in table))
        for r in rows:
            print("".join(f.format(r[k]) for _, k, f in table))


if __name__ == "__main__":
    main()
