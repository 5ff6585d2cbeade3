"""Agent Skills repositories (registry kind `skills`): install time per repository, as a
folder and as a local git repository, then search quality per mode on a query set.

    python benchmarks/skillmd.py [--queries FILE] [--modes M,M]
    # repositories: ../shared/skillmd-repos/owner__repo (copied to a temp folder; the git
    # case commits the copy with pygit2); queries: benchmarks/skillmd-dev.jsonl by default

Install time is one `install <path>` (a direct install: scan, compile every SKILL.md, fetch,
verify, commit the transaction) into a fresh home and cache, median of --runs; the first
line of each row is the folder, the second the git repository (clone into the cache
included). Quality is benchmarks/quality.py's measure over the three repositories installed
together with the model (docs/SEARCH.md).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _store import SKILLMD, shared_dir, skillmd_repos
from quality import BENCH, MODES, evaluate, load_queries, print_table, service_for

from ontoskills.config import Config
from ontoskills.install.operations import install
from ontoskills.install.options import InstallOptions
from ontoskills.install.session import Session
from ontoskills.paths import Cache, Home
from ontoskills.sources import SourceOptions
from tests.helpers.registry import commit_all


def install_once(repo: Path, work: Path) -> tuple[float, int, int]:
    """Seconds, skills and files of one direct install of `repo` into a fresh home."""
    shutil.rmtree(work, ignore_errors=True)
    home, cache = Home(work / "home"), Cache(work / "cache")
    session = Session(
        home=home,
        cache=cache,
        config=Config(path=home.config_file),
        lockfile_path=home.default_lockfile,
        options=SourceOptions(cache=cache),
    )
    t = time.perf_counter()
    report = install(session, [str(repo)], InstallOptions())
    seconds = time.perf_counter() - t
    session.close()
    change = report.changes[0]
    return seconds, len(change.skills), change.files


def install_times(tmp: Path, runs: int) -> None:
    print(f"{'repository':<28}{'as':<8}{'skills':>7}{'files':>7}{'install s':>11}")
    for pid, folder in skillmd_repos(shared_dir() / SKILLMD).items():
        copy = tmp / "repos" / pid
        shutil.copytree(folder, copy)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        for kind in ("folder", "git"):
            if kind == "git":
                commit_all(copy, "import")
            results = [install_once(copy, tmp / "work") for _ in range(runs)]
            median = statistics.median(r[0] for r in results)
            _, skills, files = results[0]
            print(f"{pid:<28}{kind:<8}{skills:>7}{files:>7}{median:>11.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=Path, default=BENCH / "skillmd-dev.jsonl")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        install_times(tmp, args.runs)
        queries = load_queries(args.queries)
        service = service_for(tmp / "quality", shared_dir() / SKILLMD, {})
        rows = [
            (args.queries.stem[:8], mode, evaluate(service, queries, mode, False))
            for mode in args.modes.split(",")
        ]
        print_table(rows, by_kind=True)


if __name__ == "__main__":
    main()
