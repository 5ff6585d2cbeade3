"""A bare JSON-RPC-over-stdio driver for `ontoskills serve`: bytes in, every stdout line out.

Independent of the SDK's client on purpose: it sees exactly what the server writes, so a
stray print or a half-written frame fails the test instead of being parsed away.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

from tests.conftest import REPO


class RawServer:
    def __init__(
        self, env: dict[str, str], *args: str, entry: tuple[str, ...] = ("-m", "ontoskills")
    ) -> None:
        """`entry`: how the interpreter starts the CLI (a `-c` that sets a module constant
        first runs the same entry with a smaller limit)."""
        full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, *entry, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw: list[bytes] = []
        self.stderr = b""
        self._threads = [
            threading.Thread(target=self._pump, daemon=True),
            threading.Thread(target=self._drain_err, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._next_id = 0
        self.notifications: list[dict[str, Any]] = []  # what arrived between replies

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _drain_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def read(self, timeout: float = 60) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise AssertionError(f"server closed stdout; stderr:\n{self.stderr.decode()}")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        reply = self.read()
        while "id" not in reply and "method" in reply:  # a notification (a log message, ...)
            self.notifications.append(reply)
            reply = self.read()
        assert reply.get("id") == self._next_id, reply
        return reply

    def initialize(self, version: str) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self, timeout: float = 30) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        for thread in self._threads:  # all of stdout/stderr captured before we return
            thread.join(timeout)
        return code

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()
