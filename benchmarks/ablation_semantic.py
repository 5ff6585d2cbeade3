"""The semantic side of hybrid search for issue 26 (paraphrases), each variant on every set.

    python benchmarks/ablation_semantic.py [--work DIR] [--cache DIR] [--only NAME,=LABEL]
                                           [--heldout]

The companion of ablation_words.py, which varied the fusion: here every variant keeps the
even fusion (`Ranker.fuse` without terms: 0.5 sem/max + 0.5 bm25/max, the ranking before the
views of ablation_views.py) and the shipped candidate walk
and replaces only the SEMANTIC score per skill (`sem`): a hubness correction, another
aggregation over a skill's vectors, other query encodings, a re-centred vector space.
Queries go through what the service does first (`query.scored`, names looked up, the
English rendering of other languages: crosslingual.py). Each query is encoded once (the
query, its filler-free form, its clauses) and cached in --cache: a variant costs seconds.

Constants are chosen on the dev sets only (the default run): dev, full dev, paraphrase-dev,
lang-dev, skillmd-dev. `--heldout` adds heldout-full, heldout-words and heldout-words2 and
prints their totals only (no per-query line), to be run once for the variant chosen.
Best here: "0.6 desc + 0.4 intents"; on top of the views it adds nothing on the dev sets, so
it did not ship (docs/SEARCH.md "Semantic side"). The baseline row is the best row's cosine.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _store import SKILLMD, shared_dir
from quality import BENCH, home_for

from ontoskills.config import Config
from ontoskills.query import scored
from ontoskills.search import crosslingual
from ontoskills.search.ranking import Ranker, Scores
from ontoskills.search.service import SkillService
from ontoskills.search.tokenize import STOP_WORDS, tokenize

DEV = {  # name -> (queries file, relative to ../shared unless absolute; registry folder)
    "dev": ("queries-dev.jsonl", "ontostore"),
    "full": ("queries-full-dev.jsonl", "ontostore-full"),
    "pdev": (str(BENCH / "paraphrase-dev.jsonl"), "ontostore-full"),
    "ldev": (str(BENCH / "lang-dev.jsonl"), "ontostore-full"),
    "sdev": (str(BENCH / "skillmd-dev.jsonl"), SKILLMD),
}
HELDOUT = {
    "heldout": (str(BENCH / "heldout-full.jsonl"), "ontostore-full"),
    "words": (str(BENCH / "heldout-words.jsonl"), "ontostore-full"),
    "words2": (str(BENCH / "heldout-words2.jsonl"), "ontostore-full"),
}
# Words that carry the asker's situation, not the need ("I'm trying to get help with...").
FILLER = frozenset(
    """help helps helping trying try tried get got make just like something anything way
    thing things know looking look find anyone someone im i'm let lets let's going gonna
    really actually basically kind sort able tell show give stuff also again""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_CLAUSE = re.compile(r"[.;:!?,()]|\b(?:and|but|so|then|because|while|also)\b", re.I)
Row = dict[str, Any]
SemVariant = Callable[["Catalog", Row], np.ndarray]


def clean(text: str) -> str:
    kept = [w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS | FILLER]
    return " ".join(kept) or text


def clauses(text: str) -> list[str]:
    """Clauses of a long query (>= 15 words), each of 3 words or more."""
    if len(_WORD.findall(text)) < 15:
        return []
    parts = [" ".join(p.split()) for p in _CLAUSE.split(text)]
    return [p for p in parts if len(_WORD.findall(p)) >= 3]


@dataclass
class Catalog:
    """One registry's vectors and what the variants precompute from them."""

    ranker: Ranker
    vectors: np.ndarray  # grouped by owner (SemanticIndex order)
    owner: np.ndarray
    starts: np.ndarray
    skills: np.ndarray
    n: int
    is_desc: np.ndarray  # the row is the skill's description vector
    pad: np.ndarray  # skills-with-vectors x widest: row ids, -1 padding
    memo: dict[str, Any]

    @classmethod
    def of(cls, ranker: Ranker) -> Catalog:
        sem = ranker.semantic
        assert sem is not None
        summaries = [r.summary_text for r in ranker.records]
        is_desc = np.asarray(
            [
                ranker.vector_text[int(r)] == summaries[int(o)]
                for r, o in zip(sem.row_ids, sem.owner, strict=True)
            ]
        )
        sizes = np.diff(np.r_[sem.starts, len(sem.owner)])
        pad = np.full((len(sem.starts), int(sizes.max())), -1, np.int64)
        for j, (s, k) in enumerate(zip(sem.starts, sizes, strict=True)):
            pad[j, :k] = np.arange(s, s + k)
        return cls(
            ranker,
            sem.vectors,
            sem.owner,
            sem.starts,
            sem.skills,
            len(ranker.records),
            is_desc,
            pad,
            {},
        )

    def best(self, sims: np.ndarray) -> np.ndarray:
        out = np.full(self.n, -1.0, np.float32)
        out[self.skills] = np.maximum.reduceat(sims, self.starts)
        return out

    def padded(self, sims: np.ndarray) -> np.ndarray:
        """skills-with-vectors x widest cosines, -inf padding, best first."""
        got = np.where(self.pad >= 0, sims[np.clip(self.pad, 0, None)], -np.inf)
        return -np.sort(-got, axis=1)

    def skill_sims(self) -> np.ndarray:
        """Skill x skill: the best cosine between any vector of one and any of the other,
        copies (one content hash) and the skill itself at -inf."""
        if "ss" not in self.memo:
            full = self.vectors @ self.vectors.T
            rows = np.maximum.reduceat(full, self.starts, axis=0)
            ss = np.maximum.reduceat(rows, self.starts, axis=1)
            g = self.ranker.group[self.skills]
            ss[g[:, None] == g[None, :]] = -np.inf
            self.memo["ss"] = ss
        return self.memo["ss"]

    def hub_r(self, k: int) -> np.ndarray:
        """CSLS r_s: mean of skill s's k best cosines to other skills (0 without vectors)."""
        key = f"r{k}"
        if key not in self.memo:
            ss = self.skill_sims()
            top = -np.sort(-ss, axis=1)[:, :k]
            r = np.where(np.isfinite(top), top, 0).mean(axis=1)
            out = np.zeros(self.n, np.float32)
            out[self.skills] = r - r.mean()
            self.memo[key] = out
        return self.memo[key]

    def hub_nk(self, k: int) -> np.ndarray:
        """k-occurrence: how often a skill is among the k nearest skills of another skill's
        vectors (its intents as pseudo-queries), over the expected count; log-scaled."""
        key = f"nk{k}"
        if key not in self.memo:
            full = self.vectors @ self.vectors.T
            per = np.maximum.reduceat(full, self.starts, axis=1)  # vector x skill
            g = self.ranker.group[self.skills]
            per[g[np.searchsorted(self.skills, self.owner)][:, None] == g[None, :]] = -np.inf
            top = np.argpartition(-per, k, axis=1)[:, :k]
            counts = np.bincount(top.ravel(), minlength=len(self.skills)).astype(np.float32)
            h = np.log1p(counts / (k * len(self.owner) / len(self.skills)))
            out = np.zeros(self.n, np.float32)
            out[self.skills] = h - h.mean()
            self.memo[key] = out
        return self.memo[key]

    def centred(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(vectors, P): the catalog's vectors minus their mean and their top d principal
        directions (all-but-the-top), re-normalised; P projects a query the same way."""
        key = f"c{d}"
        if key not in self.memo:
            mu = self.vectors.mean(axis=0)
            x = self.vectors - mu
            pcs = np.linalg.svd(x, full_matrices=False)[2][:d] if d else np.zeros((0, x.shape[1]))
            x = x - (x @ pcs.T) @ pcs
            x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-9
            self.memo[key] = (x.astype(np.float32), (mu, pcs))
        return self.memo[key]


# ---------------------------------------------------------------------------- variants
def shipped(cat: Catalog, row: Row) -> np.ndarray:
    return row["sem"]


def csls(k: int, beta: float) -> SemVariant:
    return lambda cat, row: row["sem"] - beta * cat.hub_r(k)


def kocc(k: int, beta: float) -> SemVariant:
    return lambda cat, row: row["sem"] - beta * cat.hub_nk(k)


def background(k: int) -> SemVariant:
    """Query side: the cosine above the query's own background (the mean of its k best
    skills); the fusion clips at 0, so only skills above that background keep a share."""
    return lambda cat, row: row["sem"] - float(np.sort(row["sem"])[-k:].mean()) + 1e-3


def topmean(n: int, gamma: float) -> SemVariant:
    def sem(cat: Catalog, row: Row) -> np.ndarray:
        p = cat.padded(row["sims"])[:, :n]
        extra = np.where(np.isfinite(p), p, p[:, :1]).mean(axis=1)
        out = row["sem"].copy()
        out[cat.skills] = (p[:, 0] + gamma * extra) / (1 + gamma)
        return out

    return sem


def softmax_pool(t: float) -> SemVariant:
    def sem(cat: Catalog, row: Row) -> np.ndarray:
        p = cat.padded(row["sims"])
        w = np.exp((p - p[:, :1]) / t)  # -inf padding -> weight 0
        out = row["sem"].copy()
        out[cat.skills] = (w * np.where(np.isfinite(p), p, 0)).sum(axis=1) / w.sum(axis=1)
        return out

    return sem


def desc_weight(w: float) -> SemVariant:
    """w x description cosine + (1 - w) x best intent (max where a side is missing)."""

    def sem(cat: Catalog, row: Row) -> np.ndarray:
        d = cat.best(np.where(cat.is_desc, row["sims"], -1.0))
        i = cat.best(np.where(cat.is_desc, -1.0, row["sims"]))
        both = (d > -1) & (i > -1)
        return np.where(both, w * d + (1 - w) * i, np.maximum(d, i))

    return sem


def query_clean(how: str) -> SemVariant:
    def sem(cat: Catalog, row: Row) -> np.ndarray:
        c = cat.best(cat.vectors @ row["vclean"])
        return np.maximum(row["sem"], c) if how == "max" else (row["sem"] + c) / 2

    return sem


def query_clauses(how: str) -> SemVariant:
    def sem(cat: Catalog, row: Row) -> np.ndarray:
        if not len(row["vclauses"]):
            return row["sem"]
        per = np.stack([cat.best(cat.vectors @ v) for v in row["vclauses"]])
        if how == "max":
            return np.maximum(row["sem"], per.max(axis=0))
        return (row["sem"] + per.max(axis=0)) / 2

    return sem


def centre(d: int, mix: float = 1.0) -> SemVariant:
    """Cosines in the re-centred space (all-but-the-top, d directions), mixed with raw."""

    def sem(cat: Catalog, row: Row) -> np.ndarray:
        x, (mu, pcs) = cat.centred(d)
        q = row["vec"] - mu
        q = q - (q @ pcs.T) @ pcs
        q = q / (np.linalg.norm(q) + 1e-9)
        c = cat.best(x @ q.astype(np.float32))
        return mix * c + (1 - mix) * row["sem"]

    return sem


VARIANTS: dict[str, SemVariant] = {"max cosine (shipped before)": shipped}
for _k in (5, 10, 20):
    for _b in (0.3, 0.6, 1.0):
        VARIANTS[f"csls r_s k={_k} beta={_b}"] = csls(_k, _b)
for _k in (10,):
    for _b in (0.02, 0.05, 0.1):
        VARIANTS[f"k-occurrence k={_k} beta={_b}"] = kocc(_k, _b)
for _k in (5, 20):
    VARIANTS[f"query background k={_k}"] = background(_k)
for _n, _g in ((2, 0.3), (2, 1.0), (3, 0.3), (3, 1.0)):
    VARIANTS[f"max + {_g} mean top{_n}"] = topmean(_n, _g)
for _t in (0.02, 0.05):
    VARIANTS[f"softmax pool t={_t}"] = softmax_pool(_t)
for _w in (0.3, 0.4, 0.5, 0.6, 0.7):
    VARIANTS[f"{_w} desc + {1 - _w:.1f} intents"] = desc_weight(_w)
VARIANTS["0.6 desc + 0.4 intents, k-occ 0.05"] = lambda cat, row: (
    desc_weight(0.6)(cat, row) - 0.05 * cat.hub_nk(10)
)
VARIANTS["0.6 desc + 0.4 intents, filler-free max"] = lambda cat, row: np.maximum(
    desc_weight(0.6)(cat, row), desc_weight(0.6)(cat, {**row, "sims": cat.vectors @ row["vclean"]})
)
for _h in ("max", "mean"):
    VARIANTS[f"filler-free query, {_h}"] = query_clean(_h)
    VARIANTS[f"clauses of long queries, {_h}"] = query_clauses(_h)
for _d, _m in ((0, 1.0), (1, 1.0), (3, 1.0), (10, 1.0), (3, 0.5)):
    VARIANTS[f"centred, -{_d} pcs, mix {_m}"] = centre(_d, _m)


# ---------------------------------------------------------------------------- data
def rows_for(service: SkillService, queries: list[dict]) -> list[Row]:
    state, encoder = service.state, service.catalog.encoder()
    assert encoder is not None and state.ranker.semantic is not None
    out = []
    for q in queries:
        if q.get("kind") == "hostile":
            continue
        raw = scored(q["q"])
        # as the service does: names resolved on the query, the rest on its English form
        text = crosslingual.english(raw, state.ranker.bm25.terms)
        vec = encoder.encode_one(text)
        sims = state.ranker.semantic.similarities(vec)
        parts = clauses(text)
        out.append(
            {
                "q": q,
                "terms": tokenize(text),
                "vec": vec,
                "bm": state.ranker.bm25.scores(tokenize(text)),
                "sims": sims,
                "sem": state.ranker.semantic.best_per_skill(sims),
                "lookup": state.names.resolve(raw),
                "vclean": encoder.encode_one(clean(text)),
                "vclauses": np.stack([encoder.encode_one(p) for p in parts]) if parts else [],
            }
        )
    return out


def load(sets: dict, work: Path, cache: Path) -> dict[str, tuple[Catalog, list[Row]]]:
    shared = shared_dir()
    services: dict[str, SkillService] = {}
    cats: dict[str, Catalog] = {}
    data = {}
    for name, (file, registry) in sets.items():
        if registry not in services:
            home = home_for(work, shared / registry, shared / "models")
            services[registry] = SkillService(
                home, home.default_lockfile, Config(path=home.config_file)
            )
            cats[registry] = Catalog.of(services[registry].state.ranker)
        cached = cache / f"{name}.pickle"
        if cached.is_file():
            rows = pickle.loads(cached.read_bytes())
        else:
            path = shared / file
            queries = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
            rows = rows_for(services[registry], queries)
            cached.write_bytes(pickle.dumps(rows))
        data[name] = (cats[registry], rows)
    return data


def ranks(cat: Catalog, rows: list[Row], variant: SemVariant, alone: bool) -> list[Any]:
    """(kind, rank of the first expected skill or None) per positive query, through the
    shipped candidate walk; `alone`: the semantic side by itself, else the shipped fusion."""
    ranker, out = cat.ranker, []
    for row in rows:
        q = row["q"]
        if not q["expect"]:
            continue
        sem = variant(cat, row).astype(np.float32)
        fused = np.clip(sem, 0.0, None) if alone else ranker.fuse(row["bm"], sem)
        scores = Scores(row["terms"], "hybrid", row["bm"], sem, row["sims"], fused * ranker.trust)
        hits, _ = ranker.candidates(scores, -1, 10, row["lookup"])
        recs = ranker.records
        shown = [{recs[h.index].key, *(recs[m].key for m in h.also_in)} for h in hits]
        rank = next((i for i, keys in enumerate(shown, 1) if keys & set(q["expect"])), None)
        out.append((q.get("kind", "?"), rank))
    return out


def summary(got: list[Any]) -> tuple[float, float, dict[str, float]]:
    n = max(len(got), 1)
    r1 = sum(r == 1 for _, r in got) / n
    r5 = sum(r is not None and r <= 5 for _, r in got) / n
    kinds: dict[str, list[int]] = {}
    for kind, r in got:
        kinds.setdefault(kind, []).append(r == 1)
    return r1, r5, {k: sum(v) / len(v) for k, v in kinds.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/semside-cache"))
    ap.add_argument("--only", default="")
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--alone", action="store_true", help="the semantic side alone, no fusion")
    args = ap.parse_args()
    tmp = None if args.work else tempfile.TemporaryDirectory()
    work = args.work or Path(tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    args.cache.mkdir(parents=True, exist_ok=True)
    sets = {**DEV, **(HELDOUT if args.heldout else {})}
    data = load(sets, work, args.cache)
    only = [v for v in args.only.split(",") if v]
    base = {name: ranks(cat, rows, shipped, args.alone) for name, (cat, rows) in data.items()}
    print(f"{'variant':<32}" + "".join(f"{n:>13}" for n in data) + "  +/- R@1  kinds R@1")
    for label, variant in VARIANTS.items():
        if only and not any(o[1:] == label if o[0] == "=" else o in label for o in only):
            continue
        cells, kinds_out, won, lost = [], [], 0, 0
        for name, (cat, rows) in data.items():
            got = ranks(cat, rows, variant, args.alone)
            r1, r5, kinds = summary(got)
            cells.append(f"{r1:.3f}/{r5:.3f}")
            if name in DEV:  # paired flips at rank 1 against shipped, dev sets only
                won += sum(a[1] == 1 and b[1] != 1 for a, b in zip(got, base[name], strict=True))
                lost += sum(a[1] != 1 and b[1] == 1 for a, b in zip(got, base[name], strict=True))
            for kind in ("paraphrase", "lang", "foreign", "agent"):
                if name in ("full", *HELDOUT) and kind in kinds:
                    kinds_out.append(f"{name}:{kind[:5]} {kinds[kind]:.2f}")
        flips = f"+{won}/-{lost}"
        print(
            f"{label:<32}"
            + "".join(f"{c:>13}" for c in cells)
            + f"  {flips:>7}  "
            + " ".join(kinds_out)
        )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
