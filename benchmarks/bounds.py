"""What the input budgets cost at their edge: peak memory of the worst JSON shapes per byte,
just inside each budget (accepted) and just over it (refused), against plain `json.loads`
of the same over-budget document (what the code did before issue 13).

    python benchmarks/bounds.py [--shapes dicts,keys,arrays,floats] [--kinds index,manifest]

Each measurement runs in a fresh subprocess: build the document, note the peak RSS, parse,
note the peak RSS again; "parse MB" is the growth of the peak, i.e. what parsing cost.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ontoskills import limits  # noqa: E402

# shape -> (document of K elements, the largest K whose budget count fits N); each shape is
# the worst per byte in its own way
SHAPES = {
    "dicts": ("b'[' + b'{},' * (K - 1) + b'{}]'", lambda n: (n - 1) // 2),  # 64-byte dicts
    "keys": (  # unique keys, each a new str, each with a dict
        "b'{' + b','.join(b'\"k%d\":{}' % i for i in range(K)) + b'}'",
        lambda n: (n - 2) // 3,
    ),
    "arrays": ("b'[' + b'[0],' * (K - 1) + b'[0]]'", lambda n: (n - 1) // 2),  # list + int
    "floats": ("b'[' + b'0.5,' * (K - 1) + b'0.5]'", lambda n: n - 1),  # a float per 4 bytes
    # commas inside strings: the quick count says 2K, the exact recount (slow path) says K
    "marked": ("b'[' + b'\",\",' * (K - 1) + b'\",\"]'", lambda n: n - 1),
}
BUDGETS = {
    "index": (limits.MAX_INDEX_ITEMS, limits.MAX_INDEX_BYTES),
    "manifest": (limits.MAX_JSON_ITEMS, limits.MAX_MANIFEST_BYTES),
    "intents": (limits.MAX_INTENTS_ITEMS, limits.MAX_INTENTS_BYTES),
}

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from ontoskills import jsonio
from ontoskills.errors import LimitExceededError
K = {k}
data = {shape}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
outcome = "accepted"
try:
    if {plain}:
        json.loads(data)
    else:
        jsonio.loads(data, source="x", max_bytes={max_bytes}, max_items={items})
except LimitExceededError:
    outcome = "refused"
elapsed = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
gz = len(__import__("gzip").compress(data, 6))
print(json.dumps({{"bytes": len(data), "outcome": outcome, "seconds": elapsed,
                   "parse_mb": (after - before) / 1024, "gz": gz}}))
"""


def measure(shape: str, k: int, items: int, max_bytes: int, *, plain: bool) -> dict[str, object]:
    code = CHILD.format(
        repo=str(REPO), k=k, shape=SHAPES[shape][0], plain=plain, max_bytes=max_bytes, items=items
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600
    )
    if proc.returncode != 0:
        return {"outcome": f"crash {proc.returncode}", "bytes": 0, "seconds": 0, "parse_mb": 0}
    return json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--kinds", default=",".join(BUDGETS))
    args = ap.parse_args()
    print(
        f"{'kind':<9}{'shape':<8}{'budget':>10}{'doc MB':>8}{'gzip KB':>9}"
        f"{'inside: MB':>12}{'inside: s':>11}{'over: result':>14}{'over: MB':>10}"
        f"{'over: s':>9}{'json.loads MB':>15}"
    )
    t0 = time.perf_counter()
    for kind in args.kinds.split(","):
        items, max_bytes = BUDGETS[kind]
        for shape in args.shapes.split(","):
            k = SHAPES[shape][1](items)
            inside = measure(shape, k, items, max_bytes, plain=False)
            over = measure(shape, k + 2, items, max_bytes, plain=False)
            before = measure(shape, k + 2, items, max_bytes, plain=True)
            print(
                f"{kind:<9}{shape:<8}{items:>10,}{int(over['bytes']) / 1e6:>8.1f}"
                f"{int(over.get('gz', 0)) / 1e3:>9.0f}{float(inside['parse_mb']):>12.0f}"
                f"{float(inside['seconds']):>11.2f}"
                f"{over['outcome']!s:>14}{float(over['parse_mb']):>10.0f}"
                f"{float(over['seconds']):>9.3f}{float(before['parse_mb']):>15.0f}"
            )
    print(f"({time.perf_counter() - t0:.0f} s; gzip level 6 of the over-budget document)")
    _ = gzip  # the child compresses; imported here so a missing zlib fails early


if __name__ == "__main__":
    main()
