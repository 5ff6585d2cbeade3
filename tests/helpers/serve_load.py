"""Drive a real `ontoskills serve` (SDK stdio client, several concurrent tasks) while a
thread installs, disables, enables, updates and removes packages in the same home with the
real CLI. Shared by tests/server/test_serve_under_load.py and benchmarks/serve_load.py.

Every stdout byte of the server is also recorded through tests/helpers/stdout_tap.py, so
stray output is counted even where the SDK would drop it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.helpers.registry import PackageSpec, SkillSpec, write_package

REPO = Path(__file__).resolve().parents[2]
TAP = Path(__file__).resolve().with_name("stdout_tap.py")
MOVING = "zeta/pdfkit"  # installed/removed/toggled/updated during the run
MOVING_SKILL = "zeta/pdfkit/pdf-forms"
PROBE = "fill a pdf form"  # finds MOVING_SKILL first whenever it is installed and enabled
DROPPED = "acme/design"  # removed at the end: must be gone from the last results
DROPPED_SKILL = "acme/design/colorize"


def moving_package(version: str = "1.0.0") -> PackageSpec:
    return PackageSpec(
        id=MOVING,
        version=version,
        trust_tier="verified",
        skills=[
            SkillSpec(
                "pdf-forms",
                "Fill in PDF forms and flatten them",
                intents=("fill a pdf form", "flatten pdf form fields"),
            )
        ],
    )


@dataclass
class LoadResult:
    calls: int = 0
    error_results: int = 0  # isError: true
    protocol_errors: int = 0  # exceptions from the SDK (JSON-RPC errors, closed pipe)
    malformed: int = 0  # a result without the documented structuredContent shape
    latencies_ms: list[float] = field(default_factory=list)
    rss_kb: dict[str, int] = field(default_factory=dict)  # start/middle/end VmRSS
    rss_samples: list[int] = field(default_factory=list)  # VmRSS every 500 calls
    ops: Counter[str] = field(default_factory=Counter)
    op_failures: list[str] = field(default_factory=list)
    probe_states: list[bool] = field(default_factory=list)  # MOVING_SKILL served, in order
    stdout_lines: int = 0
    non_jsonrpc_lines: int = 0
    final_probe_top: str | None = None
    final_dropped_served: bool = True
    server_alive: bool = False
    samples: list[str] = field(default_factory=list)

    @property
    def reloads_observed(self) -> int:
        """State changes of MOVING_SKILL seen by clients: each is a reload of a new tree."""
        s = self.probe_states
        return sum(1 for a, b in itertools.pairwise(s) if a != b)


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_jsonrpc(line: bytes) -> bool:
    try:
        msg = json.loads(line)
    except ValueError:
        return False
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return False
    return "method" in msg or ("id" in msg and (("result" in msg) ^ ("error" in msg)))


def _well_formed(structured: Any, q: str) -> bool:
    if not isinstance(structured, dict):
        return False
    if q.count("/") == 2:
        return structured.get("kind") == "skill"
    results = structured.get("results")
    return (
        structured.get("kind") == "search"
        and isinstance(results, list)
        and all(isinstance(r, dict) and isinstance(r.get("skill"), str) for r in results)
    )


class Mutator(threading.Thread):
    """Real CLI runs against the home: install, disable, enable, update (to a new version the
    registry just published), remove; `cycles` times or until stopped; then the final tree:
    MOVING installed, DROPPED removed."""

    def __init__(self, env: dict[str, str], registry: Path, cycles: int | None) -> None:
        super().__init__(daemon=True)
        self.env, self.registry, self.cycles = env, registry, cycles
        self.stop = threading.Event()
        self.result: LoadResult | None = None

    def _cli(self, *args: str) -> None:
        assert self.result is not None
        proc = subprocess.run(
            [sys.executable, "-m", "ontoskills", "--registry", str(self.registry), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        self.result.ops[args[0]] += 1
        if proc.returncode != 0:
            self.result.op_failures.append(f"{' '.join(args)}: {proc.stderr.strip()[-300:]}")

    def run(self) -> None:
        n = 0
        while not self.stop.is_set() and (self.cycles is None or n < self.cycles):
            n += 1
            self._cli("install", MOVING, "--quiet")
            self._cli("disable", MOVING)
            self._cli("enable", MOVING)
            write_package(self.registry, moving_package(f"1.{n}.0"))
            self._cli("update", MOVING, "--quiet")
            self._cli("remove", MOVING, "--quiet")
        self._cli("install", MOVING, "--quiet")
        self._cli("remove", DROPPED, "--quiet")


def run_load(
    home: Path,
    registry: Path,
    *,
    calls: int,
    clients: int = 4,
    cycles: int | None = None,
    queries: list[str] | None = None,
    lookups: list[str] | None = None,
    serve_args: tuple[str, ...] = (),
    workdir: Path,
) -> LoadResult:
    """`registry` must hold MOVING (the mutator rewrites its version) and DROPPED must be
    installed in `home`. Stops once `calls` calls are made and the mutator has finished."""
    env = {**os.environ, "ONTOSKILLS_HOME": str(home), "PYTHONPATH": str(REPO)}
    queries = queries or ["debug failing tests", "review code", "add color", "plan"]
    lookups = lookups or ["acme/devtools/planning", "acme/devtools/debugging"]
    log, pidfile = workdir / "stdout.log", workdir / "server.pid"
    cmd = [str(TAP), str(log), str(pidfile), "--", sys.executable, "-m", "ontoskills", "serve"]
    params = StdioServerParameters(command=sys.executable, args=[*cmd, *serve_args], env=env)
    res = LoadResult()
    mutator = Mutator(env, registry, cycles)
    mutator.result = res

    async def one(client: Client, q: str, top_k: int = 5) -> dict[str, Any] | None:
        t = time.perf_counter()
        try:
            out = await client.call_tool("ontoskill", {"q": q, "top_k": top_k})
        except Exception as exc:  # any protocol failure is what we count
            res.protocol_errors += 1
            res.samples.append(f"{q!r}: {type(exc).__name__}: {exc}"[:300])
            return None
        res.latencies_ms.append((time.perf_counter() - t) * 1000)
        res.calls += 1
        if out.is_error:
            res.error_results += 1
            res.samples.append(f"{q!r}: isError {out.content}"[:300])
            return None
        if not out.content or not _well_formed(out.structured_content, q):
            res.malformed += 1
            res.samples.append(f"{q!r}: malformed {out.structured_content}"[:300])
            return None
        return out.structured_content

    async def worker(client: Client, wid: int) -> None:
        i = wid
        while res.calls < calls or mutator.is_alive():
            if res.calls >= calls and cycles is None:
                mutator.stop.set()  # open-ended churn ends with the calls
            if i % 10 == 0:
                found = await one(client, PROBE, top_k=50)
                if found is not None:
                    served = any(r["skill"] == MOVING_SKILL for r in found["results"])
                    res.probe_states.append(served)
            elif i % 5 == 4:
                await one(client, lookups[i % len(lookups)])
            else:
                await one(client, queries[i % len(queries)])
            if res.calls // 500 > len(res.rss_samples):
                res.rss_samples.append(_rss_kb(pid))
            i += clients
            await anyio.sleep(0)

    pid = 0

    async def main() -> None:
        nonlocal pid
        async with Client(params, read_timeout_seconds=120) as client:
            await one(client, "warm up")  # waits for the catalog load
            pid = int(pidfile.read_text())
            res.rss_kb["start"] = _rss_kb(pid)
            mutator.start()
            async with anyio.create_task_group() as tg:
                for wid in range(clients):
                    tg.start_soon(worker, client, wid)
            await anyio.to_thread.run_sync(mutator.join)
            final = await one(client, PROBE, top_k=50)
            if final and final["results"]:
                res.final_probe_top = final["results"][0]["skill"]
            dropped = await one(client, "add color to a dull ui", top_k=50)
            res.final_dropped_served = dropped is None or any(
                r["skill"].startswith(DROPPED + "/") for r in dropped["results"]
            )
            res.rss_kb["end"] = _rss_kb(pid)
            samples = res.rss_samples or [res.rss_kb["end"]]
            res.rss_kb["middle"] = samples[len(samples) // 2]
            res.rss_kb["max"] = max([*samples, res.rss_kb["start"], res.rss_kb["end"]])
            res.server_alive = Path(f"/proc/{pid}").exists() and _rss_kb(pid) > 0

    anyio.run(main)
    lines = log.read_bytes().splitlines(keepends=True) if log.exists() else []
    res.stdout_lines = len(lines)
    res.non_jsonrpc_lines = sum(1 for x in lines if not (x.endswith(b"\n") and _is_jsonrpc(x)))
    return res
