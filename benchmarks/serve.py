"""`ontoskills serve` under load, measured from a client over real stdio pipes: cold start
(spawn -> initialize reply, spawn -> first tool answer), thousands of `ontoskill` calls
(calls/s, p50/p99 round-trip), and the server's RSS before/after the run (VmRSS, VmHWM: a
leak shows as growth between the two). Then the same calls over Streamable HTTP
(`serve --transport http`) from 1 and from 16 concurrent sessions (calls/s, p50/p99), and the
Skills extension's full listing (`skills/list`, every page) cold and warm.

    python benchmarks/serve.py [--home HOME] [--calls N] [--registry DIR] [--http-calls N]

Without --home it installs every package of --registry (default ../shared/ontostore) into a
fresh home first. Queries come from ../shared/queries-dev.jsonl (plus skill-id lookups).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from _store import cli_install

from tests.helpers.httpserve import HttpServer, RawSession

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOSKILLS_SHARED", REPO.parent / "shared"))


def rss_kb(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def sdk_baseline_mb() -> tuple[float, float]:
    """RSS of a bare interpreter, and of one that imported the MCP SDK server parts."""
    code = "import sys;{imp}print(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])"
    out = []
    for imp in ("", "import mcp.server.lowlevel, mcp.server.stdio, anyio;"):
        res = subprocess.run(
            [sys.executable, "-c", code.format(imp=imp)], capture_output=True, text=True, check=True
        )
        out.append(int(res.stdout.strip()) / 1024)
    return out[0], out[1]


def install_all(registry: Path, home: Path) -> None:
    index = json.loads((registry / "index.json").read_text())
    cli_install(registry, home, [p["package_id"] for p in index["packages"]])


class Pipe:
    def __init__(self, home: Path, extra: list[str]) -> None:
        env = {**os.environ, "ONTOSKILLS_HOME": str(home), "PYTHONPATH": str(REPO)}
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ontoskills", "serve", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.n = 0

    def call(self, method: str, params: dict) -> dict:  # type: ignore[type-arg]
        assert self.proc.stdin and self.proc.stdout
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert reply.get("id") == self.n, reply
        return reply

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path)
    ap.add_argument("--registry", type=Path, default=SHARED / "ontostore")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--mode", default="bm25")
    ap.add_argument("--http-calls", type=int, default=1600, help="calls per HTTP run")
    args = ap.parse_args()

    tmp = None
    home = args.home
    if home is None:
        tmp = tempfile.TemporaryDirectory()
        home = Path(tmp.name) / "home"
        t = time.perf_counter()
        install_all(args.registry, home)
        print(f"installed {args.registry} in {time.perf_counter() - t:.1f}s", file=sys.stderr)

    queries_file = SHARED / "queries-dev.jsonl"
    queries = (
        [json.loads(x)["q"] for x in queries_file.read_text().splitlines() if x.strip()]
        if queries_file.exists()
        else ["debug failing tests", "fill a pdf form", "review code"]
    )
    lookups = (
        sorted(
            {
                e
                for x in queries_file.read_text().splitlines()
                if x.strip()
                for e in json.loads(x).get("expect", [])
            }
        )
        if queries_file.exists()
        else []
    )

    rows: list[tuple[str, str]] = []
    extra = ["--mode", args.mode]
    # Cold start: a first server builds the derived index; the measured one reuses it.
    warmup = Pipe(home, extra)
    warmup.call(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    )
    warmup.call("tools/call", {"name": "ontoskill", "arguments": {"q": "warm up"}})
    warmup.close()

    pipe = Pipe(home, extra)
    pipe.call(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    )
    t_init = time.perf_counter() - pipe.t0
    pipe.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # type: ignore[union-attr]
    first = pipe.call("tools/call", {"name": "ontoskill", "arguments": {"q": queries[0]}})
    assert not first["result"].get("isError"), first
    t_first = time.perf_counter() - pipe.t0
    rss_start = rss_kb(pipe.proc.pid)

    search_lat: list[float] = []
    lookup_lat: list[float] = []
    t_run = time.perf_counter()
    for i in range(args.calls):
        use_lookup = lookups and i % 5 == 4
        q = lookups[i % len(lookups)] if use_lookup else queries[i % len(queries)]
        t = time.perf_counter()
        reply = pipe.call("tools/call", {"name": "ontoskill", "arguments": {"q": q, "top_k": 5}})
        (lookup_lat if use_lookup else search_lat).append((time.perf_counter() - t) * 1000)
        assert "result" in reply and not reply["result"].get("isError"), reply
    elapsed = time.perf_counter() - t_run
    rss_end = rss_kb(pipe.proc.pid)
    pipe.close()

    rows += [
        ("mode", args.mode),
        ("cold start: spawn -> initialize reply", f"{t_init * 1000:.0f} ms"),
        ("cold start: spawn -> first answer", f"{t_first * 1000:.0f} ms"),
        ("calls", f"{args.calls} ({len(search_lat)} search, {len(lookup_lat)} lookup)"),
        ("throughput", f"{args.calls / elapsed:.0f} calls/s"),
        (
            "search round-trip p50 / p99",
            f"{pct(search_lat, 0.5):.2f} / {pct(search_lat, 0.99):.2f} ms",
        ),
    ]
    if lookup_lat:
        rows.append(
            (
                "lookup (overview) p50 / p99",
                f"{pct(lookup_lat, 0.5):.2f} / {pct(lookup_lat, 0.99):.2f} ms",
            )
        )
    rows += [
        ("RSS after first answer", f"{rss_start.get('VmRSS', 0) / 1024:.1f} MB"),
        (
            "RSS after all calls / peak",
            f"{rss_end.get('VmRSS', 0) / 1024:.1f} MB / {rss_end.get('VmHWM', 0) / 1024:.1f} MB",
        ),
        (
            "bare python / python + MCP SDK imported",
            "{:.1f} MB / {:.1f} MB".format(*sdk_baseline_mb()),
        ),
        ("mean search", f"{statistics.fmean(search_lat):.2f} ms"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"| {'metric'.ljust(width)} | value |\n|{'-' * (width + 2)}|-------|")
    for k, v in rows:
        print(f"| {k.ljust(width)} | {v} |")
    http_table(home, extra, queries, lookups, args.http_calls)
    if tmp is not None:
        tmp.cleanup()


async def _client(url: str, calls: list[str], out: list[float], http: httpx.AsyncClient) -> None:
    raw = RawSession(http, url)
    await raw.open()
    for q in calls:
        t = time.perf_counter()
        reply = await raw.request("tools/call", {"name": "ontoskill", "arguments": {"q": q}})
        out.append((time.perf_counter() - t) * 1000)
        assert not reply["result"].get("isError"), reply
    await raw.close()


async def _run_http(url: str, qs: list[str], clients: int) -> tuple[float, list[float]]:
    lat: list[float] = []
    per = len(qs) // clients
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for c in range(clients):
                tg.start_soon(_client, url, qs[c * per : (c + 1) * per], lat, http)
        return time.perf_counter() - t, lat


async def _list_all(url: str) -> tuple[float, int]:
    async with httpx.AsyncClient(timeout=600) as http:
        raw = RawSession(http, url)
        await raw.open()
        t = time.perf_counter()
        cursor, n = None, 0
        while True:
            page = await raw.request("skills/list", {"cursor": cursor} if cursor else {})
            n += len(page["result"]["skills"])
            cursor = page["result"].get("nextCursor")
            if not cursor:
                break
        elapsed = time.perf_counter() - t
        await raw.close()
        return elapsed, n


def http_table(
    home: Path, extra: list[str], queries: list[str], lookups: list[str], calls: int
) -> None:
    """The same mix over Streamable HTTP: 1 and 16 concurrent sessions, one server process."""
    mix = [
        lookups[i % len(lookups)] if lookups and i % 5 == 4 else queries[i % len(queries)]
        for i in range(calls)
    ]
    env = {"ONTOSKILLS_HOME": str(home)}
    rows = []
    with HttpServer(env, *extra) as server:
        anyio.run(_run_http, server.url, mix[:50], 1)  # warm up: the service loads
        for clients in (1, 16):
            elapsed, lat = anyio.run(_run_http, server.url, mix, clients)
            rows.append(
                f"| {clients} | {len(lat)} | {len(lat) / elapsed:.0f} | "
                f"{pct(lat, 0.5):.1f} | {pct(lat, 0.99):.1f} |"
            )
        rss = rss_kb(server.proc.pid)
        server.stop()
    print("\nStreamable HTTP (`serve --transport http`), same call mix, one process:\n")
    print("| concurrent sessions | calls | calls/s | p50 ms | p99 ms |\n|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nserver RSS after the HTTP runs: {rss.get('VmRSS', 0) / 1024:.1f} MB")
    cache = home / "state" / "derived" / "skills-ext"
    listing = []
    with HttpServer(env, *extra) as server:
        for label in ("cold (no digest cache)", "warm (same process)"):
            if label.startswith("cold") and cache.is_dir():
                for f in cache.iterdir():
                    f.unlink()
            elapsed, n = anyio.run(_list_all, server.url)
            listing.append(f"| {label} | {n} | {elapsed:.2f} s |")
        server.stop()
    with HttpServer(env, *extra) as server:  # a restart reads the digest cache from disk
        elapsed, n = anyio.run(_list_all, server.url)
        listing.append(f"| after a restart (disk cache) | {n} | {elapsed:.2f} s |")
        server.stop()
    print("\nSkills extension, `skills/list` every page:\n")
    print("| listing | skills | time |\n|---|---|---|")
    print("\n".join(listing))


if __name__ == "__main__":
    main()
