"""Replicas behind HAProxy (issue 27 item 1): calls/s, p50/p99 and errors through the
balancer, 1 replica vs N, over one home of the full registry (read-only for the replicas).

    python benchmarks/replicas.py [--replicas 2] [--clients 8] [--calls 50] [--work DIR]

Each client is the real SDK client in the 2026-07-28 era (stateless: round-robin), making
--calls `ontoskill` searches from the dev set. HAProxy runs the config of docs/SERVER.md
("Replicas behind HAProxy"), ports changed. Needs `haproxy` and ../shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from _store import REPO, install_store, shared_dir
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

PY = sys.executable
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/mcp")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_replica(home: Path) -> tuple[subprocess.Popen[bytes], int]:
    env = {**os.environ, "ONTOSKILLS_HOME": str(home), "PYTHONPATH": str(REPO)}
    cmd = [PY, "-m", "ontoskills", "serve", "--transport", "http", "--port", "0"]
    cmd += ["--mode", "bm25", "--allow-host", "skills.internal:8765"]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    for raw in proc.stderr:
        m = LISTENING.search(raw.decode("utf-8", "replace"))
        if m:
            return proc, int(m.group(1))
    raise RuntimeError("replica did not start")


def start_haproxy(
    haproxy: str, ports: list[int], work: Path
) -> tuple[subprocess.Popen[bytes], int]:
    text = (REPO / "docs" / "SERVER.md").read_text(encoding="utf-8")
    section = text[text.index("### Replicas behind HAProxy") :]
    config = section[section.index("```haproxy\n") + 11 : section.index("```\n", 10)]
    front = free_port()
    config = config.replace("127.0.0.1:8765", f"127.0.0.1:{front}")
    config = re.sub(r"(?m)^    server r\d .*\n", "", config)
    config += "".join(f"    server r{i} 127.0.0.1:{p} check\n" for i, p in enumerate(ports))
    (work / "haproxy.cfg").write_text(config, encoding="utf-8")
    proc = subprocess.Popen([haproxy, "-db", "-f", str(work / "haproxy.cfg")])
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", front), timeout=1).close()
            return proc, front
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("haproxy did not listen")


def load(url: str, clients: int, calls: int, qs: list[str]) -> dict[str, float]:
    lat: list[float] = []
    errors = 0

    async def client(n: int) -> None:
        nonlocal errors
        async with Client(streamable_http_client(url), mode="auto") as c:  # type: ignore[arg-type]
            for i in range(calls):
                t = time.perf_counter()
                try:
                    res = await c.call_tool("ontoskill", {"q": qs[(n * calls + i) % len(qs)]})
                    errors += bool(res.is_error)
                except Exception:
                    errors += 1
                lat.append(time.perf_counter() - t)

    async def main() -> float:
        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(client, n)
        return time.perf_counter() - t0

    wall = anyio.run(main)
    lat.sort()
    return {
        "calls/s": len(lat) / wall,
        "p50 ms": 1000 * statistics.median(lat),
        "p99 ms": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))],
        "errors": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--work", type=Path)
    args = ap.parse_args()
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    registry = shared_dir() / "ontostore-full"
    if not Path(haproxy).is_file() or not (registry / "index.json").is_file():
        print("skipped: needs haproxy and ../shared/ontostore-full")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="ontoskills-replicas-"))
    root = work / "bm25"
    if not (root / "home" / "ontoskills.lock").is_file():
        install_store(root, registry, model=None)
    home = root / "home"
    rows = [
        json.loads(x)
        for x in (shared_dir() / "queries-full-dev.jsonl").read_text().splitlines()
        if x.strip()
    ]
    qs = [r["q"] for r in rows]
    print(f"load average at start: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| replicas | clients | calls | calls/s | p50 ms | p99 ms | errors |")
    print("| -------- | ------- | ----- | ------- | ------ | ------ | ------ |")
    for n in sorted({1, args.replicas}):
        replicas = [start_replica(home) for _ in range(n)]
        lb, front = start_haproxy(haproxy, [p for _, p in replicas], work)
        try:
            url = f"http://127.0.0.1:{front}/mcp"
            load(url, 1, 3, qs)  # every replica's first answer out of the way
            r = load(url, args.clients, args.calls, qs)
            print(
                f"| {n} | {args.clients} | {args.clients * args.calls} | {r['calls/s']:.1f} "
                f"| {r['p50 ms']:.0f} | {r['p99 ms']:.0f} | {r['errors']:.0f} |",
                flush=True,
            )
        finally:
            lb.terminate()
            lb.wait(10)
            for proc, _ in replicas:
                proc.terminate()
                proc.wait(30)
    print(f"load average at end: {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
