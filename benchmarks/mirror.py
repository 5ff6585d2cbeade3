"""Air-gapped mirrors and OCI registries (docs/SCALING.md "Mirrors and OCI registries").

1. `mirror` of every package of a registry into a fresh folder (time, files, bytes), with
   and without --with-embeddings, then the re-run with nothing changed (incremental);
2. the same package installed from an OCI registry (Debian's docker-registry on loopback)
   and from a static HTTP server (loopback) serving a folder registry: fresh home and cache
   each run, median of REPEAT runs. Every step is the real CLI in a subprocess (interpreter
   start-up included alike).

    python benchmarks/mirror.py [REGISTRY_DIR] [REPEAT]   # default: ../shared/ontostore, 3
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "obra/superpowers"


def cli(env: dict[str, str], *args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ontoskills", *args],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"ontoskills {' '.join(args)}: {proc.returncode}\n{proc.stderr}")
    return time.perf_counter() - start


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mirror_rows(registry: Path, tmp: Path) -> list[tuple[str, str, str, str]]:
    ids = [e["package_id"] for e in json.loads((registry / "index.json").read_bytes())["packages"]]
    env = {"ONTOSKILLS_HOME": str(tmp / "h"), "ONTOSKILLS_CACHE_DIR": str(tmp / "c")}
    rows = []
    for label, extra in (("mirror", []), ("mirror --with-embeddings", ["--with-embeddings"])):
        out = tmp / label.replace(" ", "_")
        took = cli(env, "--registry", str(registry), "mirror", *ids, "--to", str(out), *extra)
        files, size = size_of(out)
        rows.append(
            (f"{label}, {len(ids)} packages", f"{took:.2f}", str(files), f"{size / 1e6:.1f}")
        )
        again = cli(env, "--registry", str(registry), "mirror", *ids, "--to", str(out), *extra)
        rows.append(("  re-run, nothing changed", f"{again:.2f}", "0 copied", "-"))
    return rows


def oci_vs_http(registry: Path, tmp: Path, repeat: int) -> list[tuple[str, str, str]]:
    binary = shutil.which("docker-registry")
    if binary is None:
        return [("OCI vs HTTP", "skipped: docker-registry not installed", "")]
    pkg = tmp / "pkg"
    shutil.copytree(registry / "packages" / PACKAGE, pkg)
    env = {"ONTOSKILLS_HOME": str(tmp / "pub"), "ONTOSKILLS_CACHE_DIR": str(tmp / "pubc")}
    cli(env, "pack", str(pkg))
    port = free_port()
    cfg = tmp / "oci.yml"
    cfg.write_text(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n"
        f"    rootdirectory: {tmp / 'oci'}\nhttp:\n  addr: 127.0.0.1:{port}\n"
    )
    proc = subprocess.Popen(
        [binary, "serve", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    folder = tmp / "folder-registry"
    handler = functools.partial(QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        time.sleep(1.0)
        oci = f"oci://127.0.0.1:{port}/skills"
        cli(env, "publish", str(pkg), "--registry", oci)
        cli(env, "registry", "init", str(folder), "--no-git")
        cli(env, "publish", str(pkg), "--registry", str(folder))
        web = f"http://127.0.0.1:{httpd.server_address[1]}/"
        rows = []
        for label, url in (("OCI (docker-registry)", oci), ("static HTTP", web)):
            times = []
            for i in range(repeat):
                run = {
                    "ONTOSKILLS_HOME": str(tmp / f"{label[:4]}-h{i}"),
                    "ONTOSKILLS_CACHE_DIR": str(tmp / f"{label[:4]}-c{i}"),
                }
                times.append(cli(run, "--registry", url, "install", PACKAGE))
            rows.append((label, f"{statistics.median(times):.2f}", f"{min(times):.2f}"))
        return rows
    finally:
        httpd.shutdown()
        proc.terminate()
        proc.wait()


def main() -> None:
    registry = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "ontostore"
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="ontoskills-bench-mirror-") as t:
        tmp = Path(t)
        print(f"\n| {registry.name} | s | files | MB |\n|---|---|---|---|")
        for row in mirror_rows(registry, tmp):
            print("| " + " | ".join(row) + " |")
        print(f"\n| install {PACKAGE} (fresh home + cache) | median s | min s |\n|---|---|---|")
        for row2 in oci_vs_http(registry, tmp, repeat):
            print("| " + " | ".join(row2) + " |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
