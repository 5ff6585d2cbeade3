"""Embeddings around an install transaction: what install/update/ci/remove call.

`prepare` runs before the commit (model present and verified, staged vectors compatible);
`finish` runs after it (sample-check stored vectors, derive missing ones, drop stale derived
data). `finish` never fails the command: the tree and lock are already committed, so its
problems become warnings.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from ..config import Config
from ..errors import OntoskillsError
from ..fsutil import atomic_write_bytes, remove_file, sha256_bytes
from ..intents import parse_intents
from ..limits import MAX_INTENTS_PER_SKILL
from ..lockfile import LockedModel, LockedPackage, Lockfile
from ..paths import Home
from ..progress import NullReporter, Reporter
from .encoder import Encoder, ModelError
from .model import encoder_for, ensure_model, model_paths, verify_model
from .optimize import optimized_model
from .vectors import (
    INTENTS_FILE,
    IntentVector,
    ModuleInfo,
    derived_fingerprint,
    derived_path,
    missing_modules,
    read_derived,
    read_manifest,
    read_modules,
    save_derived,
    stored_vectors,
)

DRIFT_COSINE = 0.99
SAMPLE = 8
BATCH = 32


def wants_embeddings(lock: Lockfile) -> bool:
    return any(p.with_embeddings for p in lock.packages.values())


def prepare(
    home: Home,
    config: Config,
    lock: Lockfile,
    *,
    offline: bool,
    model_path: str | None = None,
    package_dirs: dict[str, Path] | None = None,
    reporter: Reporter | None = None,
    cache_dir: Path | None = None,
) -> list[str]:
    """Before commit: ensure the model (recorded in lock.embeddings); check staged vectors.

    package_dirs: package id -> folder holding its new files (staging) to check. Returns
    warnings; raises ModelError (exit 4) when stored vectors cannot match the model.
    """
    if not (wants_embeddings(lock) or model_path):
        return []
    record = ensure_model(
        home,
        config=config,
        offline=offline,
        model_path=model_path,
        expected=None if model_path else lock.embeddings,
        reporter=reporter or NullReporter(),
        cache_dir=cache_dir,
    )
    lock.embeddings = record
    warnings: list[str] = []
    for pid, folder in sorted((package_dirs or {}).items()):
        pkg = lock.packages.get(pid)
        if pkg is not None and pkg.with_embeddings:
            warnings += check_compatible(folder, record, pid)
    return warnings


def check_compatible(folder: Path, record: LockedModel, package_id: str) -> list[str]:
    """Every intents.json must hold vectors of the model's dimension (else ModelError)."""
    warnings = []
    for path in sorted(folder.rglob(INTENTS_FILE)):
        if not path.is_file() or path.is_symlink():
            continue
        parsed = parse_intents(
            path.read_bytes(), source=f"{package_id}: {path.relative_to(folder)}"
        )
        where = f"{package_id}/{path.relative_to(folder).as_posix()}"
        if parsed.dimension != record.dimension:
            raise ModelError(
                f"{where} holds {parsed.dimension}-dim vectors but the model "
                f"{record.model} produces {record.dimension}",
                hint="install the model the vectors were made with (--model PATH or "
                "[embeddings] model/revision)",
            )
        if parsed.model and parsed.model != record.model:
            warnings.append(
                f"{where} was made with {parsed.model}, the installed model is {record.model}"
            )
    return warnings


def fingerprint(pkg: LockedPackage, record: LockedModel) -> str:
    model_sha = next((f.sha256 for f in record.files if f.path == "model.onnx"), "")
    return f"{pkg.integrity}:{model_sha}"


def scan_package(pkg_dir: Path) -> tuple[list[ModuleInfo], list[IntentVector]]:
    """Modules (Turtle) and stored vectors (intents.json) of an installed package."""
    modules = read_modules(pkg_dir, read_manifest(pkg_dir))
    return modules, stored_vectors(pkg_dir, modules)


def sample_cosine(
    encoder: Encoder, stored: list[IntentVector], sample: int = SAMPLE
) -> float | None:
    """Lowest cosine between stored vectors and the encoder's, over a spread-out sample."""
    if not stored:
        return None
    step = max(1, len(stored) // sample)
    picked = stored[::step][:sample]
    got = encoder.encode([v.intent for v in picked])
    if got.shape[1] != picked[0].vector.shape[0]:
        raise ModelError(
            f"stored vectors are {picked[0].vector.shape[0]}-dim, the model gives {got.shape[1]}"
        )
    return float(min((got * np.stack([v.vector for v in picked])).sum(axis=1)))


def derive_package(
    home: Home,
    package_id: str,
    encoder: Encoder,
    fingerprint: str,
    reporter: Reporter,
    scan: tuple[list[ModuleInfo], list[IntentVector]] | None = None,
    extra: dict[str, object] | None = None,
) -> int:
    """Compute and store vectors for the package's modules that have none; returns count."""
    modules, stored = scan or scan_package(home.package_dir(package_id))
    todo = missing_modules(modules, stored)
    # No more per skill than the catalog indexes (limits.MAX_INTENTS_PER_SKILL): a module
    # with 100,000 intents must not cost 100,000 encodes here.
    per_skill: Counter[str] = Counter()
    entries = []
    for m in todo:
        for intent in m.intents:
            if per_skill[m.skill or m.module] < MAX_INTENTS_PER_SKILL:
                per_skill[m.skill or m.module] += 1
                entries.append((m, intent))
    reporter.stage(f"deriving vectors for {package_id}", total=len(entries))
    chunks = []
    for start in range(0, len(entries), BATCH):  # batches padded to their longest intent
        texts = [intent for _, intent in entries[start : start + BATCH]]
        chunks.append(encoder.encode(texts, batch_size=BATCH))
        reporter.advance(len(texts))
    dim = encoder.dimension
    matrix = np.concatenate(chunks) if chunks else np.zeros((0, dim), dtype=np.float32)
    save_derived(derived_path(home, package_id), entries, matrix, fingerprint, extra)
    return len(entries)


def finish(
    home: Home,
    config: Config,
    lock: Lockfile,
    *,
    reporter: Reporter | None = None,
    cache_dir: Path | None = None,
) -> list[str]:
    """After commit: drop stale derived data, sample-check and derive for new content.

    cache_dir: where derived data is also kept by fingerprint (package content + model), so
    a fresh home installing the same package with the same model encodes nothing.
    """
    reporter = reporter or NullReporter()
    warnings: list[str] = []
    try:
        drop_stale(home, lock)
    except OSError as exc:
        warnings.append(f"embeddings: could not remove stale derived vectors: {exc}")
    if lock.embeddings is None or not wants_embeddings(lock):
        return warnings
    prepare_serving(home, warnings)
    encoder: Encoder | None = None
    for pid, pkg in sorted(lock.packages.items()):
        if not pkg.with_embeddings:
            continue
        fp = fingerprint(pkg, lock.embeddings)
        # The tree and lock are committed: whatever goes wrong here is a warning (the next
        # install or `export-embeddings` retries), never a failed command.
        try:
            target = derived_path(home, pid)
            if derived_fingerprint(target) == fp:
                continue
            cached = (
                cache_dir / "derived" / f"{sha256_bytes(fp.encode())}.npz" if cache_dir else None
            )
            loaded = read_derived(cached) if cached else None
            if cached and loaded and loaded[0].get("fingerprint") == fp:
                atomic_write_bytes(target, cached.read_bytes())  # same content, same model
                cos = loaded[0].get("sample_cosine")
            else:
                encoder = encoder or encoder_for(home, config, lock.embeddings)
                scan = scan_package(home.package_dir(pid))
                cos = sample_cosine(encoder, scan[1])
                derive_package(home, pid, encoder, fp, reporter, scan, {"sample_cosine": cos})
                if cached:
                    atomic_write_bytes(cached, target.read_bytes())
            if isinstance(cos, float) and (math.isnan(cos) or cos < DRIFT_COSINE):
                warnings.append(
                    f"{pid}: the installed model reproduces its stored vectors at cosine "
                    f"{cos:.3f} (< {DRIFT_COSINE}); semantic search may rank poorly"
                )
        except OntoskillsError as exc:
            warnings.append(f"{pid}: embeddings: {exc.message}")
        except Exception as exc:  # post-commit: report, never fail
            warnings.append(f"{pid}: embeddings: {type(exc).__name__}: {exc}")
    return warnings


def prepare_serving(home: Home, warnings: list[str]) -> None:
    """Rewrite the installed model once for serving (optimize.py) now, so the first search
    or server start does not pay for it."""
    model = model_paths(home)["model.onnx"]
    try:
        if model.is_file():
            optimized_model(model, home.derived_dir / "encoder", make=True)
    except OntoskillsError as exc:  # e.g. a symlinked state/derived: refused, said
        warnings.append(f"embeddings: could not prepare the model for serving: {exc.message}")
    except OSError as exc:
        warnings.append(f"embeddings: could not prepare the model for serving: {exc}")


def drop_stale(home: Home, lock: Lockfile) -> None:
    """Derived vectors of packages no longer installed are deleted."""
    root = home.derived_dir / "vectors"
    if not root.is_dir():
        return
    for path in sorted(root.glob("*/*.npz")):
        pid = f"{path.parent.name}/{path.stem}"
        if pid not in lock.packages:
            remove_file(path)


def doctor_checks(home: Home, lock: Lockfile, *, fast: bool = False) -> tuple[list[str], list[str]]:
    """(model files differing from the lock: integrity, other embedding problems)."""
    drift: list[str] = []
    problems: list[str] = []
    if lock.embeddings is not None:
        drift = verify_model(home, lock.embeddings, fast=fast)
    elif wants_embeddings(lock):
        problems.append("embeddings: packages want vectors but the lock records no model")
    for pid, pkg in sorted(lock.packages.items()):
        if not pkg.with_embeddings or lock.embeddings is None:
            continue
        if derived_fingerprint(derived_path(home, pid)) != fingerprint(pkg, lock.embeddings):
            problems.append(
                f"{pid}: derived vectors for modules without stored ones are missing or stale "
                f"(run `ontoskills export-embeddings {pid}`)"
            )
    return drift, problems
