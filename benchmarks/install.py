"""Install throughput: every package of a registry, over loopback HTTP, from a folder and from
a local git repository, into fresh homes; compared with a plain copy + sha256 of the same
bytes measured in the same run (target: within 3x of that copy).

    python benchmarks/install.py [REGISTRY_DIR]     # default: ../shared/ontostore
"""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

import pygit2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills.config import Config  # noqa: E402
from ontoskills.install.operations import InstallOptions, install  # noqa: E402
from ontoskills.install.session import Session  # noqa: E402
from ontoskills.manifest import parse_index  # noqa: E402
from ontoskills.paths import Cache, Home  # noqa: E402
from ontoskills.sources import SourceOptions  # noqa: E402


def copy_and_hash(src: Path, dest: Path) -> tuple[int, int]:
    files = size = 0
    for p in sorted(src.rglob("*")):
        if p.is_file():
            target = dest / p.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = p.read_bytes()
            hashlib.sha256(data).hexdigest()
            target.write_bytes(data)
            files += 1
            size += len(data)
    return files, size


def serve(root: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


def git_repo(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    repo = pygit2.init_repository(str(dest), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("bench", "bench@example.invalid", 0, 0)
    repo.create_commit("HEAD", sig, sig, "registry", repo.index.write_tree(), [])
    return dest


def run_install(url: str, packages: list[str], work: Path, tag: str) -> tuple[float, int, int]:
    home = Home(work / f"home-{tag}")
    # --with-embeddings needs an encoder; there is no hub here
    models = Path(os.environ.get("ONTOSKILLS_SHARED", REPO.parent / "shared")) / "models"
    session = Session(
        home=home,
        cache=Cache(work / f"cache-{tag}"),
        config=Config(path=home.config_file, embeddings={"path": str(models)}),
        lockfile_path=home.default_lockfile,
        options=SourceOptions(cache=Cache(work / f"cache-{tag}")),
        registry_override=url,
    )
    start = time.perf_counter()
    install(session, packages, InstallOptions(with_embeddings=True))
    elapsed = time.perf_counter() - start
    files = size = 0
    for p in home.author_dir.rglob("*"):
        if p.is_file():
            files += 1
            size += p.stat().st_size
    return elapsed, files, size


def main() -> None:
    registry = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "ontostore"
    if not (registry / "index.json").is_file():
        sys.exit(f"no registry at {registry} (pass a registry folder)")
    index = parse_index((registry / "index.json").read_bytes(), source="index.json")
    packages = [e.package_id for e in index]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        files, size = copy_and_hash(registry / "packages", work / "plain-copy")
        baseline = time.perf_counter() - t0
        rows = [("copy + sha256 (baseline)", baseline, files, size)]
        url, server = serve(registry)
        kinds = {
            "http (loopback)": url,
            "folder": str(registry),
            "git (local repo)": str(git_repo(registry, work / "git-registry")),
        }
        for name, location in kinds.items():
            try:
                rows.append((name, *run_install(location, packages, work, name.split()[0])))
            except Exception as exc:  # a kind not available in this checkout yet
                rows.append((f"{name}: {type(exc).__name__}: {exc}", float("nan"), 0, 0))
        server.shutdown()
    print(f"registry: {registry}  ({len(packages)} packages, {files} files, {size / 1e6:.1f} MB)")
    print(f"{'kind':<28}{'wall s':>9}{'files/s':>10}{'MB/s':>9}{'x copy':>9}")
    for name, secs, n, b in rows:
        ratio = secs / baseline if baseline else float("nan")
        rate = n / secs if secs == secs and secs > 0 else float("nan")
        mbs = b / 1e6 / secs if secs == secs and secs > 0 else float("nan")
        print(f"{name:<28}{secs:>9.3f}{rate:>10.0f}{mbs:>9.1f}{ratio:>9.1f}")


if __name__ == "__main__":
    main()
