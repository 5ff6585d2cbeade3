"""What signing costs. (1) Install from a signed vs an unsigned 100-package registry (the same
packages, published the same way), through the real CLI in fresh homes with cold caches,
over a folder and loopback HTTP: all 100 packages in one command, and one package (where
the fixed cost of refreshing the metadata shows most). Target: verification adds <= 25 %.
(2) Publish into a 10k-package signed registry with hashed bins: time per publish and the
metadata bytes re-signed, vs the same registry unsigned.

    python benchmarks/signing.py [--repeat 3] [--sizes 10000] [--bins 16,256,1024]

Runs alternate signed/unsigned so load drifts hit both; medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills.publish.gitops import Author  # noqa: E402
from ontoskills.publish.publish import PublishOptions, publish  # noqa: E402
from ontoskills.publish.registry import SignedInit, index_bytes, init_registry  # noqa: E402
from ontoskills.signing import admin  # noqa: E402
from ontoskills.signing.repo import Policy, write_files  # noqa: E402
from tests.helpers.faults import FaultServer  # noqa: E402
from tests.publish.conftest import make_package  # noqa: E402

AUTHOR = Author("bench", "bench@example.invalid")
N_PACKAGES = 100


def cli(home: Path, cache: Path, *args: str) -> float:
    env = {
        **os.environ,
        "ONTOSKILLS_HOME": str(home),
        "ONTOSKILLS_CACHE_DIR": str(cache),
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "CI": "1",
    }
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", "--quiet", *args],
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"ontoskills {' '.join(args[:4])} failed: {proc.stderr}")
    return elapsed


def build(tmp: Path, *, signed: bool) -> tuple[Path, Path]:
    root, keys = tmp / ("signed" if signed else "plain"), tmp / "keys"
    sign = SignedInit(keys, Policy()) if signed else None
    init_registry(root, git=True, author=AUTHOR, signed=sign)
    for i in range(N_PACKAGES):
        pkg = make_package(tmp / "work", f"bench/pkg{i:03d}", "1.0.0")
        publish(
            pkg,
            PublishOptions(
                registry=str(root),
                force=True,  # bench/pkg001 is one edit from bench/pkg000: fine here
                keys_dir=keys if signed else None,
                author_name=AUTHOR.name,
                author_email=AUTHOR.email,
            ),
        )
    return root, keys


def install_rows(tmp: Path, repeat: int) -> list[tuple[str, float, float]]:
    plain, _ = build(tmp, signed=False)
    signed, _ = build(tmp, signed=True)
    specs = [f"bench/pkg{i:03d}" for i in range(N_PACKAGES)]
    rows = []
    with FaultServer(plain) as p_srv, FaultServer(signed) as s_srv:
        for kind in ("folder", "http"):
            for label, wanted in (("100 packages", specs), ("1 package", specs[:1])):
                times: dict[bool, list[float]] = {False: [], True: []}
                for run in range(repeat):
                    for is_signed in (run % 2 == 0, run % 2 != 0):
                        where = tmp / f"client-{kind}-{is_signed}-{len(wanted)}-{run}"
                        home, cache = where / "home", where / "cache"
                        reg = signed if is_signed else plain
                        url = (
                            (s_srv.url if is_signed else p_srv.url) if kind == "http" else str(reg)
                        )
                        add = ["registry", "add", "r", url]
                        if kind == "folder":
                            add += ["--kind", "folder"]
                        if is_signed:
                            add += ["--root", str(signed / "metadata/root.json")]
                        cli(home, cache, *add)
                        times[is_signed].append(cli(home, cache, "install", *wanted))
                        shutil.rmtree(where)
                u, s = statistics.median(times[False]), statistics.median(times[True])
                rows.append((f"install {label} ({kind})", u, s))
    return rows


def synthetic_registry(tmp: Path, size: int, bins: int | None) -> tuple[Path, Path, int]:
    """`size` index entries whose packages are real targets (5 files each) in the bins but not
    on disk (growth.py's trick: only what a step touches exists)."""
    root, keys = tmp / f"reg-{size}-{bins}", tmp / f"keys-{size}-{bins}"
    entries = [
        {
            "package_id": f"a{i % 997}/p{i}",
            "trust_tier": "community",
            "source_kind": "ontoskills",
            "manifest_path": f"packages/a{i % 997}/p{i}/package.json",
        }
        for i in range(size)
    ]
    init_registry(root, git=True, author=AUTHOR)
    data = index_bytes(entries)
    (root / "index.json").write_bytes(data)
    targets = {"index.json": (hashlib.sha256(data).hexdigest(), len(data))}
    for e in entries:
        base = e["manifest_path"].rsplit("/", 1)[0]
        for name in (
            "package.json",
            "a/ontoskill.ttl",
            "b/ontoskill.ttl",
            "a/intents.json",
            "LICENSE",
        ):
            digest = hashlib.sha256(f"{base}/{name}".encode()).hexdigest()
            targets[f"{base}/{name}"] = (digest, 1000 + len(name))
    if bins is not None:
        policy = Policy()
        policy.bin_bits = bins.bit_length() - 1
        files, _ = admin.create(root, keys, policy, targets)
        write_files(root, files)
    import pygit2

    repo = pygit2.Repository(str(root))
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature(AUTHOR.name, AUTHOR.email)
    repo.create_commit("HEAD", sig, sig, "synthetic", repo.index.write_tree(), [repo.head.target])
    return root, keys, len(targets)


def publish_rows(tmp: Path, size: int, bin_counts: list[int], repeat: int) -> list[tuple[str, ...]]:
    rows = []
    for bins in [None, *bin_counts]:
        root, keys, n_targets = synthetic_registry(tmp, size, bins)
        times, signed_bytes = [], []
        for i in range(repeat):
            pkg = make_package(tmp / f"w{bins}", "bench/new", f"1.{i}.0")
            t = time.perf_counter()
            result = publish(
                pkg,
                PublishOptions(
                    registry=str(root),
                    force=True,  # bench/pkg001 is one edit from bench/pkg000: fine here
                    keys_dir=keys,
                    author_name=AUTHOR.name,
                    author_email=AUTHOR.email,
                ),
            )
            times.append(time.perf_counter() - t)
            signed_bytes.append(sum((root / p).stat().st_size for p in result.signed))
        label = "unsigned" if bins is None else f"signed, {bins} bins"
        bin_size = ""
        if bins is not None:
            first = root / "metadata" / f"bins-{0:0{len(f'{bins - 1:x}')}x}.json"
            bin_size = f"{first.stat().st_size / 1024:.0f} KB"
        rows.append(
            (
                f"{size:,} packages ({n_targets:,} targets)",
                label,
                f"{statistics.median(times):.2f} s",
                f"{statistics.median(signed_bytes) / 1024:.0f} KB" if bins else "-",
                bin_size,
            )
        )
        shutil.rmtree(root)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--bins", default="16,256,1024")
    ap.add_argument("--skip-install", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", AUTHOR.name)
    os.environ.setdefault("GIT_AUTHOR_EMAIL", AUTHOR.email)
    with tempfile.TemporaryDirectory(prefix="ontoskills-bench-signing-") as tmp_s:
        tmp = Path(tmp_s)
        if not args.skip_install:
            print("| install (fresh home, cold cache) | unsigned | signed | overhead |")
            print("|---|---:|---:|---:|")
            for label, u, s in install_rows(tmp / "install", args.repeat):
                print(
                    f"| {label} | {u:.2f} s | {s:.2f} s | {100 * (s - u) / u:+.0f} % |", flush=True
                )
            print()
        print("| registry | metadata | time per publish | metadata re-signed | one bin |")
        print("|---|---|---:|---:|---:|")
        for size in (int(x) for x in args.sizes.split(",")):
            for row in publish_rows(
                tmp / "publish", size, [int(b) for b in args.bins.split(",")], args.repeat
            ):
                print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
