"""The world benchmarks/kill_loop.py kills in: v1 -> v2 registries (folder, loopback HTTP,
git), prepared start homes per operation, the uninterrupted references, and the helpers every
kind of iteration shares (snapshot, doctor + re-run + compare, a run through _killpoint.py).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.faults import FaultServer  # noqa: E402
from tests.helpers.registry import (  # noqa: E402
    PackageSpec,
    SkillSpec,
    build_registry,
    commit_all,
    sample_packages,
)

KILLPOINT = REPO / "benchmarks" / "_killpoint.py"
OPS = ("install", "update", "ci", "remove")
Snapshot = dict[str, tuple[str, bool] | bytes]


def packages(version: str) -> list[PackageSpec]:
    """sample_packages + one package big enough (180 assets, ~2 MB) to be killed mid-way."""
    rnd = random.Random(version)
    skills = [SkillSpec(f"skill-{i:03d}", f"skill {i} {version}") for i in range(40)]
    assets = {
        f"skill-{i:03d}/data/blob-{j}.bin": (rnd.randbytes(12_000), j == 0)
        for i in range(40)
        for j in range(4)
    }
    big = PackageSpec(id="big/pkg", version=version, skills=skills, assets=assets)
    specs = sample_packages()
    for s in specs:
        s.version = version
        s.skills[0].description += f" {version}"
    return [*specs, big]


def snapshot(home: Path, lockfile: Path) -> Snapshot:
    out: Snapshot = {}
    tree = home / "ontologies"
    if tree.exists():
        for p in sorted(tree.rglob("*")):
            if p.is_file():
                # system/index.*.ttl hold absolute file: IRIs of this home
                data = p.read_bytes().replace(home.as_uri().encode(), b"file:///HOME")
                out[p.relative_to(home).as_posix()] = (
                    hashlib.sha256(data).hexdigest(),
                    bool(p.stat().st_mode & 0o100),
                )
    out["LOCK"] = lockfile.read_bytes() if lockfile.exists() else b""
    return out


@dataclass
class World:
    """Registries (v1 -> v2) in three kinds and, per kind, the start homes for each op."""

    base: Path
    kinds: tuple[str, ...]
    urls: dict[str, str] = field(default_factory=dict)
    starts: dict[tuple[str, str], Path] = field(default_factory=dict)  # (kind, op) -> dir
    refs: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    server: FaultServer | None = None
    replaces: dict[tuple[str, str], int] = field(default_factory=dict)  # os.replace per run

    def env(self, run_dir: Path) -> dict[str, str]:
        return {
            **os.environ,
            "ONTOSKILLS_HOME": str(run_dir / "home"),
            "ONTOSKILLS_CACHE_DIR": str(run_dir / "cache"),
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
            "ONTOSKILLS_RETRY_BASE": "0.01",
            "ONTOSKILLS_LOCK_TIMEOUT": "60",
        }

    def cli(self, run_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ontoskills", *args],
            env=self.env(run_dir),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )

    def op_args(self, kind: str, op: str) -> list[str]:
        reg = ["--registry", self.urls[kind]]
        return {
            "install": [*reg, "install", "big/pkg", "acme/design"],
            "update": [*reg, "update"],
            "ci": ["ci"],
            "remove": ["remove", "big/pkg", "acme/design"],
        }[op]


def _must(proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != 0:
        raise RuntimeError(f"{proc.args} exited {proc.returncode}:\n{proc.stderr}")


@contextmanager
def world(base: Path, kinds: tuple[str, ...]) -> Iterator[World]:
    """Build v1 registries, the start homes against v1, then move every registry to v2."""
    w = World(base, kinds)
    reg = build_registry(base / "reg", packages("1.0.0"))
    git_dir = base / "reg-git"
    shutil.copytree(reg, git_dir)
    commit_all(git_dir, "v1")
    with FaultServer(reg) as srv:
        w.server = srv
        w.urls = {"folder": str(reg), "http": srv.url, "git": str(git_dir)}
        for kind in kinds:
            s0 = base / f"start-{kind}-s0"
            _must(w.cli(s0, "--registry", w.urls[kind], "install", "acme/devtools"))
            s1 = base / f"start-{kind}-s1"
            _must(
                w.cli(
                    s1,
                    "--registry",
                    w.urls[kind],
                    "install",
                    "acme/devtools",
                    "acme/design",
                    "big/pkg",
                )
            )
            w.starts[(kind, "install")] = s0
            w.starts[(kind, "update")] = s1
            w.starts[(kind, "remove")] = s1
        # v2: every file of every package changes; the folder/HTTP tree in place, git by commit
        shutil.rmtree(reg)
        build_registry(reg, packages("2.0.0"))
        shutil.rmtree(git_dir / "packages")
        build_registry(git_dir, packages("2.0.0"))
        commit_all(git_dir, "v2")
        for kind in kinds:
            # ci starts from the v1 tree with the lock an update to v2 writes
            ref_upd = base / f"ref-{kind}-update-lock"
            shutil.copytree(w.starts[(kind, "update")], ref_upd, symlinks=True)
            _must(w.cli(ref_upd, *w.op_args(kind, "update")))
            ci_start = base / f"start-{kind}-ci"
            shutil.copytree(w.starts[(kind, "update")], ci_start, symlinks=True)
            shutil.copyfile(ref_upd / "home/ontoskills.lock", ci_start / "home/ontoskills.lock")
            w.starts[(kind, "ci")] = ci_start
            for op in OPS:
                ref = base / f"ref-{kind}-{op}"
                shutil.copytree(w.starts[(kind, op)], ref, symlinks=True)
                t = time.perf_counter()
                _must(w.cli(ref, *w.op_args(kind, op)))
                w.refs[(kind, op)] = snapshot(ref / "home", ref / "home/ontoskills.lock")
                w.refs[(kind, f"{op}-seconds")] = time.perf_counter() - t  # type: ignore[assignment]
        yield w


def _doctor_rerun_compare(
    w: World, kind: str, op: str, run_dir: Path, state: str
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], list[str]]:
    """doctor (must not crash), the re-run (must succeed), then what differs from the
    uninterrupted reference (empty: converged) and a final doctor (must be clean)."""
    home, lock = run_dir / "home", run_dir / "home/ontoskills.lock"
    doctor = w.cli(run_dir, "doctor")
    if "Traceback" in doctor.stderr:
        raise RuntimeError(f"doctor crashed after a kill:\n{doctor.stderr}")
    rerun = w.cli(run_dir, *w.op_args(kind, op))
    if op == "remove" and rerun.returncode == 7 and state == "new":
        pass  # the kill landed after the commit: nothing left to remove
    elif rerun.returncode != 0:
        raise RuntimeError(f"re-run of {op} ({kind}) exited {rerun.returncode}:\n{rerun.stderr}")
    got, want = snapshot(home, lock), w.refs[(kind, op)]
    final = w.cli(run_dir, "doctor")
    why = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    if final.returncode != 0:
        why.append(f"doctor exit {final.returncode}: {final.stderr.strip()[-300:]}")
    return doctor, rerun, why


def _killpoint(
    w: World, run_dir: Path, kind: str, op: str, extra: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(KILLPOINT), *w.op_args(kind, op)],
        env={**w.env(run_dir), **extra},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
