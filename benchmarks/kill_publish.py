"""SIGKILL at random points of `ontoskills publish` into a git registry and a folder
registry (`registry init --no-git`); every kill is followed by a re-run of the same publish,
then `registry verify` must pass and the registry must equal an uninterrupted publish:
index.json bytes, every file of the package, (git) HEAD's tree and a clean work tree with no
staging folder or temp file left.

    python benchmarks/kill_publish.py [--iterations 50] [--seed 1]
                                      [--kinds git,folder,sparse,hostile]

The start registry already holds big/pkg 1.0.0 (160 assets, ~2 MB, so a kill can land in
the copy, the swap, the index write or the commit, plus text files with CRLF, mixed line
endings and `$Id$` that git filters would rewrite); each iteration publishes 2.0.0. The
`hostile` registry is a sparse git registry with every setting of tests/helpers/gitsettings.py
(.gitattributes eol/text/ident/filter, .gitignore, info/exclude, core.autocrlf/safecrlf): it
must still converge to the exact bytes. The work tree is compared with HEAD byte for byte
(publish/worktree.py); `git status` too, except for `hostile`, where git's own filters make
status report files whose bytes are exactly the commit's.
tests/hardening/test_kill_publish.py runs a handful of the same iterations in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills.publish.worktree import worktree_differences  # noqa: E402
from tests.helpers.gitsettings import ALL, TRICKY_ASSETS, make_hostile  # noqa: E402
from tests.helpers.registry import PackageSpec, SkillSpec, write_package  # noqa: E402

PKG = "big/pkg"
VERSION_EXISTS = 2  # VersionConflictError (a usage error): the kill landed after the commit
Snapshot = dict[str, str]
# registry kinds: `registry init` flags (sparse: git + the per-package index/, docs/SCALING.md)
INIT_FLAGS = {"git": [], "folder": ["--no-git"], "sparse": ["--sparse"], "hostile": ["--sparse"]}


def package_spec(version: str) -> PackageSpec:
    rnd = random.Random(version)
    skills = [SkillSpec(f"skill-{i:03d}", f"skill {i} {version}") for i in range(40)]
    assets = {
        f"skill-{i:03d}/data/blob-{j}.bin": (rnd.randbytes(12_000), j == 0)
        for i in range(40)
        for j in range(4)
    }
    for rel, (data, executable) in TRICKY_ASSETS.items():
        assets[f"tricky/{rel}"] = (data + version.encode(), executable)
    return PackageSpec(PKG, skills, version=version, assets=assets, files_array=True)


def make_package(base: Path, version: str) -> Path:
    """A package folder in publish format (package.json with the `files` hashes)."""
    write_package(base / f"src-{version}", package_spec(version))
    return base / f"src-{version}" / "packages" / PKG


def snapshot(reg: Path, git_status: bool = True) -> Snapshot:
    """Every file outside .git (path -> sha256 + exec bit); for git also HEAD's tree id,
    how the work tree differs from it (bytes; and `git status` unless told not to), and
    whether a commit is in progress (index.lock)."""
    out: Snapshot = {}
    for p in sorted(reg.rglob("*")):
        rel = p.relative_to(reg)
        if rel.parts[0] == ".git" or not p.is_file():
            continue
        mode = "x" if p.stat().st_mode & 0o100 else "-"
        out[rel.as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest() + mode
    if (reg / ".git").exists():
        repo = pygit2.Repository(str(reg))
        out["HEAD^{tree}"] = str(repo.head.peel(pygit2.Commit).tree_id)
        out["WORKTREE"] = repr([str(d) for d in worktree_differences(reg)])
        if git_status:
            dirty = {k: v for k, v in repo.status().items() if v != pygit2.GIT_STATUS_CURRENT}
            out["STATUS"] = repr(sorted(dirty.items()))
        out["LOCKS"] = repr(sorted(p.name for p in (reg / ".git").rglob("*.lock")))
    return out


@dataclass
class World:
    base: Path
    kinds: tuple[str, ...]
    pkg: Path = Path()
    starts: dict[str, Path] = field(default_factory=dict)
    refs: dict[str, Snapshot] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "Kill Loop",
            "GIT_AUTHOR_EMAIL": "kill@example.org",
            "ONTOSKILLS_HOME": str(self.base / "home"),
            "ONTOSKILLS_CACHE_DIR": str(self.base / "cache"),
            "ONTOSKILLS_LOCK_TIMEOUT": "60",
        }

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "ontoskills", *args]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            env=self.env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )

    def publish_args(self, reg: Path) -> list[str]:
        return ["publish", str(self.pkg), "--registry", str(reg)]


def _must(proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != 0:
        raise RuntimeError(f"{proc.args} exited {proc.returncode}:\n{proc.stderr}")


@contextmanager
def world(base: Path, kinds: tuple[str, ...]) -> Iterator[World]:
    """Start registries holding 1.0.0, and the reference after an uninterrupted 2.0.0."""
    w = World(base, kinds)
    v1 = make_package(base, "1.0.0")
    w.pkg = make_package(base, "2.0.0")
    for kind in kinds:
        start = base / f"start-{kind}"
        _must(w.cli("registry", "init", str(start), *INIT_FLAGS[kind]))
        if kind == "hostile":
            make_hostile(start, ALL)
        _must(w.cli("publish", str(v1), "--registry", str(start)))
        w.starts[kind] = start
        ref = base / f"ref-{kind}"
        shutil.copytree(start, ref, symlinks=True)
        t = time.perf_counter()
        _must(w.cli(*w.publish_args(ref)))
        w.seconds[kind] = time.perf_counter() - t
        w.refs[kind] = snapshot(ref, kind != "hostile")
        if w.refs[kind].get("WORKTREE", "[]") != "[]":
            raise RuntimeError(f"{kind}: work tree differs after a clean publish")
        verify = w.cli("registry", "verify", str(ref))
        _must(verify)
    yield w


@dataclass
class Outcome:
    killed_mid_run: bool
    state_after_kill: str  # "old" | "new" | "partial"
    phase: str  # where a "partial" kill landed: staging | swap | index | commit | other
    rerun_exit: int
    verify_exit: int
    converged: bool
    seconds: float
    why: list[str] = field(default_factory=list)


def one_iteration(w: World, kind: str, rng: random.Random, reg: Path) -> Outcome:
    t0 = time.perf_counter()
    if reg.exists():
        shutil.rmtree(reg)
    shutil.copytree(w.starts[kind], reg, symlinks=True)
    old = snapshot(reg, kind != "hostile")
    want = w.refs[kind]
    proc = subprocess.Popen(
        w.argv(*w.publish_args(reg)),
        env=w.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(rng.uniform(0.02, w.seconds[kind] * 1.1))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = proc.returncode == -signal.SIGKILL
    after = snapshot(reg, kind != "hostile")
    state = "old" if after == old else "new" if after == want else "partial"
    phase = _phase(after, old, want) if state == "partial" else state
    rerun = w.cli(*w.publish_args(reg))
    why: list[str] = []
    if "Traceback" in rerun.stderr:
        why.append(f"re-run crashed: {rerun.stderr.strip()[-300:]}")
    elif rerun.returncode not in (0, VERSION_EXISTS) or (
        rerun.returncode == VERSION_EXISTS and state != "new"
    ):
        # "already published" is right only when the first run had finished everything
        why.append(f"re-run exit {rerun.returncode}: {rerun.stderr.strip()[-300:]}")
    verify = w.cli("registry", "verify", str(reg))
    if verify.returncode != 0:
        why.append(f"verify exit {verify.returncode}: {verify.stderr.strip()[-300:]}")
    got = snapshot(reg, kind != "hostile")
    why += sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    return Outcome(
        killed,
        state,
        phase,
        rerun.returncode,
        verify.returncode,
        not why,
        time.perf_counter() - t0,
        why,
    )


def _phase(after: Snapshot, old: Snapshot, want: Snapshot) -> str:
    names = " ".join(after)
    if ".pkg.old-" in names:
        return "swap"  # between the two renames, or removing the moved-aside old version
    if ".pkg.publish-" in names:
        return "staging"  # copying into the staging folder
    files = {k: v for k, v in after.items() if k.startswith("packages/")}
    if files == {k: v for k, v in want.items() if k.startswith("packages/")}:
        return "index" if after.get("index.json") != want.get("index.json") else "commit"
    return "other"


def run(iterations: int, seed: int, kinds: tuple[str, ...], base: Path) -> dict[str, list[Outcome]]:
    rng = random.Random(seed)
    results: dict[str, list[Outcome]] = defaultdict(list)
    with world(base, kinds) as w:
        for i in range(iterations):
            kind = kinds[i % len(kinds)]
            results[kind].append(one_iteration(w, kind, rng, base / "run"))
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default="git,folder")
    args = ap.parse_args()
    kinds = tuple(args.kinds.split(","))
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ontoskills-kill-publish-") as tmp:
        results = run(args.iterations, args.seed, kinds, Path(tmp))
    print(
        f"{'registry':<8} {'runs':>4} {'killed':>6} {'after kill old/new/partial':>27} "
        f"{'converged':>9} {'s/iter':>6}"
    )
    total = killed = converged = 0
    for kind, outs in results.items():
        states = [sum(o.state_after_kill == s for o in outs) for s in ("old", "new", "partial")]
        k = sum(o.killed_mid_run for o in outs)
        c = sum(o.converged for o in outs)
        total, killed, converged = total + len(outs), killed + k, converged + c
        mean = sum(o.seconds for o in outs) / len(outs)
        print(
            f"{kind:<8} {len(outs):>4} {k:>6} {'/'.join(map(str, states)):>27} {c:>9} {mean:>6.2f}"
        )
    print(
        f"total: {total} iterations, {killed} SIGKILLs landed mid-run, {converged} converged, "
        f"{total - converged} lost; {time.perf_counter() - t:.0f} s"
    )
    phases = sorted({o.phase for outs in results.values() for o in outs} - {"old", "new"})
    for kind, outs in results.items():
        counts = ", ".join(f"{ph} {sum(o.phase == ph for o in outs)}" for ph in phases)
        print(f"{kind}: partial kills by phase: {counts}")
    for kind, outs in results.items():
        for o in outs:
            if not o.converged:
                print(f"NOT CONVERGED {kind}: after kill {o.state_after_kill}; {o.why[:5]}")
    if converged != total:
        sys.exit(1)


if __name__ == "__main__":
    main()
