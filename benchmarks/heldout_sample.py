"""The skills `heldout-full.jsonl` was written for: a fixed-seed sample, stratified by package.

    python benchmarks/heldout_sample.py [--show] [--copies]

Prints one key per line (`--show`: with the skill's description, intents, section titles and
the start of its body, which is what the query writer read; `--copies`: every key that
shares the sampled skill's `oc:contentHash`). Reproducible: the sample depends only on the
seed and the registry's `index.json` / `package.json` files, never on the dev query sets.

Allocation (N = 130 skills of 626): every package outside skillsbench gets
max(1, round(N * its skills / 626)) skills; the 88 skillsbench packages (218 skills, all
`default_enabled: false`, so the sample covers opt-in skills) share round(N * 218 / 626) = 45,
one skill each from 45 packages drawn at random.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from _store import shared_dir

from ontoskills.skillheader import SkillHeader, read_skill_header

SEED = 20261124
TARGET = 130


def packages(registry: Path) -> dict[str, dict]:
    index = json.loads((registry / "index.json").read_text())
    return {
        p["package_id"]: json.loads((registry / p["manifest_path"]).read_text())
        for p in index["packages"]
    }


def sample(registry: Path) -> list[str]:
    rng = random.Random(SEED)
    pkgs = packages(registry)
    total = sum(len(m["skills"]) for m in pkgs.values())
    picked: list[str] = []
    bench = sorted(p for p in pkgs if p.startswith("skillsbench/"))
    for pid in sorted(pkgs):
        if pid in bench:
            continue
        ids = sorted(s["id"] for s in pkgs[pid]["skills"])
        k = max(1, round(TARGET * len(ids) / total))
        picked += [f"{pid}/{sid}" for sid in rng.sample(ids, min(k, len(ids)))]
    bench_skills = sum(len(pkgs[p]["skills"]) for p in bench)
    for pid in rng.sample(bench, round(TARGET * bench_skills / total)):
        sid = rng.choice(sorted(s["id"] for s in pkgs[pid]["skills"]))
        picked.append(f"{pid}/{sid}")
    return picked


def header(registry: Path, key: str) -> SkillHeader | None:
    author, pkg, sid = key.split("/", 2)
    manifest = packages(registry)[f"{author}/{pkg}"]
    skill = next(s for s in manifest["skills"] if s["id"] == sid)
    folder = registry / "packages" / author / pkg / skill["path"]
    ttl = folder / "ontoskill.ttl" if folder.is_dir() else folder
    return read_skill_header(ttl.read_bytes(), str(ttl), lenient=True)


def copies(registry: Path) -> dict[str, list[str]]:
    """contentHash -> keys, over the whole registry (for the `expect` lists)."""
    groups: dict[str, list[str]] = {}
    for pid, manifest in packages(registry).items():
        for skill in manifest["skills"]:
            key = f"{pid}/{skill['id']}"
            head = header(registry, key)
            if head is not None and head.content_hash:
                groups.setdefault(head.content_hash, []).append(key)
    return groups


def main() -> None:
    registry = shared_dir() / "ontostore-full"
    keys = sample(registry)
    groups = copies(registry) if "--copies" in sys.argv else {}
    for key in keys:
        if "--copies" in sys.argv:
            head = header(registry, key)
            same = groups.get(head.content_hash, [key]) if head else [key]
            print(key, " ".join(k for k in same if k != key))
            continue
        print(key)
        if "--show" not in sys.argv:
            continue
        head = header(registry, key)
        if head is None:
            continue
        for label, text in (
            ("desc", head.description),
            ("diff", head.differentia),
            ("intents", "; ".join(head.intents)),
            ("say", " | ".join(head.body.get("say", []))),
            ("prose", " | ".join(head.body.get("prose", []))),
        ):
            print(f"  {label}: {' '.join(text.split())[:500]}")


if __name__ == "__main__":
    main()
