"""Each skill read whole (issue 26): which whole-skill texts, how much weight, and a learned
fusion, each variant on the five dev sets (and, with --heldout, once on the held-out sets).

    python benchmarks/ablation_views.py [--work DIR] [--heldout]

Every query is scored once as the service scores it (the other-language stage applied,
BM25 per skill, the cosine to every intent vector); each variant then builds its own
meaning score and fusion, and the shipped candidate walk (`Ranker.candidates`: copies
collapsed, the looked-up skill pinned) turns it into results. The shipped views are the
ranker's own (catalog/model.SkillRecord.view_texts); the other texts are encoded here once
and cached in DIR. "learned" is a linear model over 13 query-relative features (BM25 and
meaning over their best, ranks, coverage of the query, interactions) fitted by a listwise
softmax loss and scored out of fold (5 folds over every dev query at once). Prints R@1 / R@5
per set. docs/SEARCH.md "Views" says what was chosen (on the dev sets only) and why.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _store import SKILLMD, shared_dir
from ablation_words import norm
from quality import BENCH, service_for

from ontoskills.catalog.model import SkillRecord
from ontoskills.query import clean, scored
from ontoskills.search import crosslingual
from ontoskills.search.ranking import Ranker, Scores
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import tokenize

DEV = {
    "dev": ("queries-dev.jsonl", "ontostore"),
    "full": ("queries-full-dev.jsonl", "ontostore-full"),
    "para": (str(BENCH / "paraphrase-dev.jsonl"), "ontostore-full"),
    "lang": (str(BENCH / "lang-dev.jsonl"), "ontostore-full"),
    "smd": (str(BENCH / "skillmd-dev.jsonl"), SKILLMD),
}
HELD = {
    "heldout": (str(BENCH / "heldout-full.jsonl"), "ontostore-full"),
    "words": (str(BENCH / "heldout-words.jsonl"), "ontostore-full"),
    "words2": (str(BENCH / "heldout-words2.jsonl"), "ontostore-full"),
    "words3": (str(BENCH / "heldout-words3.jsonl"), "ontostore-full"),
    "smdheld": (str(BENCH / "skillmd-heldout.jsonl"), SKILLMD),
}


def _name(r: SkillRecord) -> str:
    return r.name or r.skill_id.replace("-", " ")


# Whole-skill texts tried (the shipped pair is "bag" + "about": SkillRecord.view_texts).
TEXTS: dict[str, Callable[[SkillRecord], str]] = {
    "name+desc+12 intents": lambda r: f"{_name(r)}. {r.description} " + ". ".join(r.intents[:12]),
    "name+desc": lambda r: f"{_name(r)}. {r.description}",
    "12 intents + desc": lambda r: ". ".join(r.intents[:12]) + ". " + r.description,
}
DEPTH = 30  # candidates per ranker for the learned fusion
Row = dict[str, Any]
Variant = Callable[[Ranker, Row], np.ndarray]


def rows_for(service: SkillService, queries: list[dict], other: dict[str, np.ndarray]) -> list[Row]:
    ranker = service.state.ranker
    encoder = service.catalog.encoder()
    sem_index = ranker.semantic
    assert encoder is not None and sem_index is not None and sem_index.views is not None
    out = []
    for q in queries:
        if q.get("kind") == "hostile" or not q["expect"]:
            continue
        text = scored(clean(q["q"]))
        lookup = service.state.names.resolve(text)
        text = crosslingual.english(text, ranker.bm25.terms)
        vec = encoder.encode_one(text)
        sims = sem_index.similarities(vec)
        views = sem_index.similarities_of(sem_index.views, vec).reshape(-1, sem_index.n_views)
        row = {"q": q, "terms": tokenize(text), "vec": vec, "sims": sims, "lookup": lookup}
        row |= {"bm": ranker.bm25.scores(row["terms"]), "sem": sem_index.best_per_skill(sims)}
        row |= {"bag": views[:, 0], "about": views[:, 1]}
        row |= {name: m @ vec for name, m in other.items()}
        out.append(row)
    return out


# ------------------------------------------------------------------------ learned fusion
def features(ranker: Ranker, row: Row, meaning: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bm, terms = row["bm"], row["terms"]
    cand = np.unique(np.r_[np.argsort(-bm)[:DEPTH], np.argsort(-meaning)[:DEPTH]])
    bm_n, sem_n, top = norm(bm)[cand], norm(meaning)[cand], float(meaning.max())
    rank_bm, rank_sem = np.empty(len(bm)), np.empty(len(bm))
    rank_bm[np.argsort(-bm, kind="stable")] = np.arange(len(bm))
    rank_sem[np.argsort(-meaning, kind="stable")] = np.arange(len(bm))
    cov, unknown = np.zeros(len(cand)), 0.0
    for j, i in enumerate(cand):
        if bm[i] > 0:
            cov[j], unknown = ranker.bm25.evidence(terms, int(i))
    top_cov = float(cov[np.argmax(bm[cand])]) if bm.max() > 0 else 0.0
    logn = np.log1p(len(set(terms)))
    x = [bm_n, sem_n, np.clip(meaning[cand], 0, None) - top, cov, 1 / (1 + rank_bm[cand])]
    x += [1 / (1 + rank_sem[cand]), bm_n * top_cov, sem_n * (1 - top_cov), bm_n * cov]
    x += [sem_n * top, bm_n * logn, sem_n * logn, sem_n * unknown]
    return cand, np.stack(x, axis=1)


def fit(
    data: list[tuple[np.ndarray, np.ndarray]], l2: float = 1e-2, steps: int = 600
) -> np.ndarray:
    """Listwise softmax (temperature 1/5), Adam: the expected candidates' probability mass."""
    data = [(x, y) for x, y in data if y.any()]  # an expected skill among the candidates
    w = np.zeros(data[0][0].shape[1])
    w[0] = w[1] = 1.0  # start at an even fusion
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        g = l2 * w
        for x, y in data:
            s = 5.0 * (x @ w)
            p = np.exp(s - s.max())
            p /= p.sum()
            g += 5.0 * (x.T @ (p - y * p / (y * p).sum())) / len(data)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


# ------------------------------------------------------------------------------ scoring
def rank_of(ranker: Ranker, row: Row, final: np.ndarray) -> int | None:
    final = final * ranker.trust
    scores = Scores(row["terms"], "hybrid", row["bm"], row["sem"], row["sims"], final)
    hits, _ = ranker.candidates(scores, -1, 10, row["lookup"])
    expect = set(row["q"]["expect"])
    for n, h in enumerate(hits, 1):
        if {ranker.records[h.index].key, *(ranker.records[m].key for m in h.also_in)} & expect:
            return n
    return None


def cell(ranks: list[int | None]) -> str:
    n = max(len(ranks), 1)
    r1 = sum(r == 1 for r in ranks) / n
    r5 = sum(r is not None and r <= 5 for r in ranks) / n
    return f"{r1:.3f} / {r5:.3f}"


def fixed(views: tuple[str, ...], alpha: float, intent: float = 1.0, gate: float = 0.0) -> Variant:
    """meaning = intent x best intent + the views; `gate` > 0: BM25 x min(1, its winner's
    coverage of the query / gate) (the shipped BM25_FULL_COVERAGE is 0.5)."""

    def fuse(ranker: Ranker, row: Row) -> np.ndarray:
        meaning = intent * row["sem"] + sum((row[v] for v in views), np.zeros_like(row["sem"]))
        bm = norm(row["bm"])
        if gate and float(row["bm"].max()) > 0:
            coverage, _ = ranker.bm25.evidence(row["terms"], int(np.argmax(row["bm"])))
            bm = bm * min(1.0, coverage / gate)
        return alpha * norm(meaning) + (1 - alpha) * bm

    return fuse


def shipped(ranker: Ranker, row: Row) -> np.ndarray:
    """The shipped code itself (semantic.meaning, Ranker.fuse), not a copy of its formula:
    the row the variants are read against cannot drift from what search does."""
    assert ranker.semantic is not None
    return ranker.fuse(row["bm"], ranker.semantic.meaning(row["vec"], row["sem"]), row["terms"])


BOTH = ("bag", "about")
VARIANTS: dict[str, Variant] = {
    "no views, alpha 0.5 (before)": fixed((), 0.5),
    "no views, alpha 0.6": fixed((), 0.6),
    "no views, BM25 gated at coverage 0.5": fixed((), 0.5, gate=0.5),
    **{f"+ {t}, alpha 0.5": fixed((t,), 0.5) for t in TEXTS},
    "+ bag (intents joined), alpha 0.5": fixed(("bag",), 0.5),
    "+ about (name: desc + 6 intents), alpha 0.5": fixed(("about",), 0.5),
    "+ bag + about, alpha 0.5": fixed(BOTH, 0.5),
    "+ bag + about, alpha 0.55": fixed(BOTH, 0.55),
    "+ bag + about, alpha 0.6": fixed(BOTH, 0.6),
    "+ bag + about, alpha 0.65": fixed(BOTH, 0.65),
    "+ bag + about, best intent x 0.5, alpha 0.6": fixed(BOTH, 0.6, 0.5),
    **{
        f"+ bag + about, alpha {a}, BM25 gated at coverage {g}": fixed(BOTH, a, gate=g)
        for g in (0.3, 0.4, 0.6, 0.7)
        for a in (0.5, 0.6)
    },
    "+ bag + about, alpha 0.45, BM25 gated at coverage 0.5": fixed(BOTH, 0.45, gate=0.5),
    "**+ bag + about, alpha 0.5, BM25 gated at coverage 0.5 (shipped)**": shipped,
    "+ bag + about, alpha 0.55, BM25 gated at coverage 0.5": fixed(BOTH, 0.55, gate=0.5),
    "meaning alone (semantic mode)": fixed(BOTH, 1.0),
}


def learned_ranks(
    rows: dict[str, list[Row]], rankers: dict[str, Ranker], held: list[str]
) -> tuple[dict[str, list[int | None]], dict[str, list[int | None]]]:
    """Out-of-fold ranks on the dev sets; held-out ranks from a fit on every dev query."""
    items = []
    for name in DEV:
        for row in rows.get(name, []):
            items.append((name, row, *prepare(rankers[name], row)))
    fold = np.random.default_rng(7).integers(0, 5, len(items))
    dev: dict[str, list[int | None]] = {}
    for k in range(5):
        w = fit([(x, y) for (_, _, _, x, y), f in zip(items, fold, strict=True) if f != k])
        for (name, row, cand, x, _), f in zip(items, fold, strict=True):
            if f == k:
                dev.setdefault(name, []).append(rank_of(rankers[name], row, place(row, cand, x, w)))
    w = fit([(x, y) for *_, x, y in items])
    out: dict[str, list[int | None]] = {}
    for name in held:
        for row in rows[name]:
            cand, x, _ = prepare(rankers[name], row)
            out.setdefault(name, []).append(rank_of(rankers[name], row, place(row, cand, x, w)))
    return dev, out


def prepare(ranker: Ranker, row: Row) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cand, x = features(ranker, row, row["sem"] + row["bag"] + row["about"])
    expect = set(row["q"]["expect"])
    return cand, x, np.array([ranker.records[i].key in expect for i in cand], float)


def place(row: Row, cand: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.zeros(len(row["bm"]), np.float32)
    s = x @ w
    out[cand] = np.exp(5.0 * (s - s.max())) + 1e-6
    return out


def other_texts(work: Path, service: SkillService, registry: str) -> dict[str, np.ndarray]:
    cache = work / f"views-tried-{registry}.pkl"
    if cache.is_file():
        got: dict[str, np.ndarray] = pickle.loads(cache.read_bytes())
        return got
    encoder = service.catalog.encoder()
    assert encoder is not None
    records = service.state.ranker.records
    out = {t: np.asarray(encoder.encode([f(r)[:1200] for r in records])) for t, f in TEXTS.items()}
    for m in out.values():
        m /= np.linalg.norm(m, axis=1, keepdims=True)
    cache.write_bytes(pickle.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "qbench")
    ap.add_argument("--heldout", action="store_true", help="also score the held-out sets once")
    args = ap.parse_args()
    shared = shared_dir()
    built: dict[str, SkillService] = {}
    sets = {**DEV, **(HELD if args.heldout else {})}
    rows: dict[str, list[Row]] = {}
    rankers: dict[str, Ranker] = {}
    for name, (qfile, registry) in sets.items():
        path = shared / qfile
        if not path.is_file():
            print(f"{name}: {path} missing, skipped", file=sys.stderr)
            continue
        service = service_for(args.work, shared / registry, built)
        rankers[name] = service.state.ranker
        queries = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        rows[name] = rows_for(service, queries, other_texts(args.work, service, registry))
    names = list(rows)
    print("| variant (hybrid R@1 / R@5) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, variant in VARIANTS.items():
        cells = [
            cell([rank_of(rankers[n], r, variant(rankers[n], r)) for r in rows[n]]) for n in names
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    dev, held = learned_ranks(rows, rankers, [n for n in names if n not in DEV])
    both = {**dev, **held}
    print(
        "| learned fusion over bag + about (dev: out of fold) | "
        + " | ".join(cell(both[n]) for n in names)
        + " |"
    )


if __name__ == "__main__":
    main()
