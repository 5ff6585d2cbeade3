"""Publishing throughput: pack every package of a registry, publish them all into a fresh
git registry (validate + copy + index + commit each), then `registry verify` the result.

    python benchmarks/publish.py [REGISTRY_DIR]     # default: ../shared/ontostore

Targets: pack and verify hash/parse at disk speed (well under 1 s for the 6-package subset);
a publish costs one validation pass plus one git commit.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills.manifest import parse_index  # noqa: E402
from ontoskills.paths import Cache  # noqa: E402
from ontoskills.publish.gitops import Author  # noqa: E402
from ontoskills.publish.pack import pack  # noqa: E402
from ontoskills.publish.publish import PublishOptions, publish  # noqa: E402
from ontoskills.publish.registry import init_registry  # noqa: E402
from ontoskills.publish.skillmd import convert  # noqa: E402
from ontoskills.publish.verify import verify_registry  # noqa: E402
from ontoskills.registries import RegistryConfig  # noqa: E402
from ontoskills.sources import SourceOptions, open_source  # noqa: E402


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "ontostore"
    if not (src / "index.json").is_file():
        sys.exit(f"no registry at {src}")
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@example.invalid")
    index = parse_index((src / "index.json").read_bytes(), source="index.json")
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        work = tmp / "work"
        for e in index:
            shutil.copytree(src / e.package_root, work / e.package_id)
            for p in (work / e.package_id).rglob("*"):
                os.chmod(p, 0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644)
        files = sum(1 for p in work.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        t = time.perf_counter()
        for e in index:
            pack(work / e.package_id)
        rows.append(
            (
                f"pack {len(index)} packages ({files} files, {size / 1e6:.1f} MB)",
                time.perf_counter() - t,
                "",
            )
        )

        reg = tmp / "registry"
        init_registry(reg, git=True, author=Author("bench", "bench@example.invalid"))
        t = time.perf_counter()
        for e in index:
            publish(work / e.package_id, PublishOptions(registry=str(reg), force=True))
        dt = time.perf_counter() - t
        rows.append(
            (
                f"publish {len(index)} packages to a git registry",
                dt,
                f"{dt / len(index) * 1000:.0f} ms/publish",
            )
        )

        opts = SourceOptions(cache=Cache.resolve(str(tmp / "cache")))
        for kind in ("folder", "git"):
            source = open_source(RegistryConfig("bench", str(reg), kind), opts)
            t = time.perf_counter()
            report = verify_registry(source)
            rows.append(
                (
                    f"registry verify ({kind}, {report.files_checked} files hashed)",
                    time.perf_counter() - t,
                    f"{report.errors} errors",
                )
            )
        source = open_source(RegistryConfig("store", str(src), "folder"), opts)
        t = time.perf_counter()
        report = verify_registry(source)
        rows.append(
            (
                "registry verify of the source store (no hashes)",
                time.perf_counter() - t,
                f"{report.errors} errors, {report.warnings} warnings",
            )
        )

        t = time.perf_counter()
        for s in sorted((REPO / "registry" / "src").iterdir()):
            convert(s, tmp / "skillmd" / s.name)
        rows.append(("pack --from-skill-md registry/src", time.perf_counter() - t, ""))

    width = max(len(r[0]) for r in rows)
    print(f"{'step'.ljust(width)}  seconds  note")
    for name, sec, note in rows:
        print(f"{name.ljust(width)}  {sec:7.3f}  {note}")


if __name__ == "__main__":
    main()
