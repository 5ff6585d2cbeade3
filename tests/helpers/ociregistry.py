"""CNCF distribution (Debian's `docker-registry`) on loopback for the `oci` registry kind.

Started per test with its own storage folder (tests tamper with blobs there) and, when
asked, htpasswd (bcrypt) basic auth; skipped cleanly where the binary is missing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

BINARY = "docker-registry"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class OciRegistry:
    port: int
    storage: Path

    @property
    def url(self) -> str:
        return f"oci://127.0.0.1:{self.port}/skills"

    def blob_file(self, digest: str) -> Path:
        hexd = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hexd[:2] / hexd / "data"


def require_binary() -> str:
    path = shutil.which(BINARY)
    if path is None:
        pytest.skip(f"{BINARY} (CNCF distribution) is not installed")
    return path


@contextmanager
def oci_registry(base: Path, *, users: dict[str, str] | None = None) -> Iterator[OciRegistry]:
    binary = require_binary()
    base.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    auth = ""
    if users:
        htpasswd = shutil.which("htpasswd")
        if htpasswd is None:
            pytest.skip("htpasswd (apache2-utils) is not installed")
        lines = [
            subprocess.run(
                [htpasswd, "-Bbn", user, password], capture_output=True, text=True, check=True
            ).stdout.strip()
            for user, password in users.items()
        ]
        (base / "htpasswd").write_text("\n".join(lines) + "\n")
        auth = f"auth:\n  htpasswd:\n    realm: test\n    path: {base / 'htpasswd'}\n"
    storage = base / "data"
    (base / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: error\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n" + auth
    )
    proc = subprocess.Popen(
        [binary, "serve", str(base / "config.yml")],
        stdout=subprocess.DEVNULL,
        stderr=open(base / "registry.log", "wb"),  # noqa: SIM115
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v2/", timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((base / "registry.log").read_text()) from None
                time.sleep(0.1)
        yield OciRegistry(port, storage)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
