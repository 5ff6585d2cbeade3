"""`export-embeddings`: the maintainer's export, and derived vectors for installed packages.

Registry export (`--ontology-root DIR --output-dir DIR`): writes the pinned, verified
model.onnx + tokenizer.json into the output folder (a registry's `embeddings/`), and an
intents.json for every folder of the ontology tree that has modules declaring intents. Each
such file covers ALL the folder's modules, one entry per intent tagged with its module's
identifier, so no module loses its vectors to another one (QUIRKS 6) while existing readers
that scan one intents.json per folder keep working.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import NotFoundError, UsageError
from ..fsutil import atomic_write_bytes
from ..lockfile import LockedModel, Lockfile
from ..paths import Home
from ..progress import NullReporter, Reporter
from .model import MODEL_FILES, acquire, configured_encoder, encoder_for
from .place import link_or_copy
from .sync import derive_package, fingerprint
from .vectors import INTENTS_FILE, ModuleInfo, read_modules


@dataclass
class ExportResult:
    """A registry export (`--ontology-root DIR --output-dir DIR`)."""

    output_dir: Path
    model: LockedModel | None = None
    modules: int = 0  # modules that declare intents
    intents: int = 0
    files: list[str] = field(default_factory=list)  # intents.json written (relative)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "export-embeddings",
            "output_dir": str(self.output_dir),
            "model": self.model.model if self.model else None,
            "dimension": self.model.dimension if self.model else None,
            "modules": self.modules,
            "intents": self.intents,
            "files": list(self.files),
        }


@dataclass(frozen=True)
class Derived:
    """`export-embeddings author/pkg...`: intent vectors derived per installed package."""

    counts: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"command": "export-embeddings", "derived": dict(self.counts)}


def intents_document(model: str, dimension: int, rows: list[tuple[str, str, list[float]]]) -> bytes:
    """The registry's intents.json format; rows are (intent, identifier, vector)."""
    doc = {
        "model": model,
        "dimension": dimension,
        "intents": [{"intent": i, "embedding": v, "skills": [ident]} for i, ident, v in rows],
    }
    return (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")


def export_tree(
    ontology_root: Path,
    output_dir: Path,
    *,
    config: Config,
    offline: bool = False,
    model_path: str | None = None,
    reporter: Reporter | None = None,
) -> ExportResult:
    reporter = reporter or NullReporter()
    root = ontology_root.expanduser().absolute()
    if not root.is_dir():
        raise UsageError(f"--ontology-root {root} is not a folder")
    out = output_dir.expanduser().absolute()
    out.mkdir(parents=True, exist_ok=True)
    result = ExportResult(out)
    src, record = acquire(
        config, tmp=out, offline=offline, model_path=model_path, reporter=reporter
    )
    for name in MODEL_FILES:
        link_or_copy(src[name], out / name, link=False)
    result.model = record
    encoder = configured_encoder(out, config.embeddings, model_name=record.model)

    reporter.stage("reading modules")
    modules = [m for m in read_modules(root) if m.intents]
    by_folder: dict[str, list[ModuleInfo]] = defaultdict(list)
    for m in modules:
        by_folder[m.folder].append(m)
    result.modules = len(modules)
    reporter.stage("encoding intents", total=len(modules))
    for folder in sorted(by_folder):
        rows: list[tuple[str, str, list[float]]] = []
        for m in sorted(by_folder[folder], key=lambda m: m.module):
            vectors = encoder.encode(list(m.intents))
            rows += [
                (i, m.identifier, [float(x) for x in v])
                for i, v in zip(m.intents, vectors, strict=True)
            ]
            reporter.advance()
        rel = f"{folder}/{INTENTS_FILE}" if folder else INTENTS_FILE
        atomic_write_bytes(out / rel, intents_document(record.model, record.dimension, rows))
        result.files.append(rel)
        result.intents += len(rows)
    return result


def export_installed(
    home: Home, config: Config, lock: Lockfile, package_id: str, reporter: Reporter | None = None
) -> int:
    """Derive vectors for an installed package's modules without stored ones; returns count."""
    reporter = reporter or NullReporter()
    pkg = lock.packages.get(package_id)
    if pkg is None:
        raise NotFoundError(f"{package_id} is not installed", hint="see `ontoskills list`")
    encoder = encoder_for(home, config, lock.embeddings)
    fp = fingerprint(pkg, lock.embeddings) if lock.embeddings else "unlocked-model"
    return derive_package(home, package_id, encoder, fp, reporter)
