"""Stored vs derived vectors on the real store's quirks, and the real model's fidelity."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from ontoskills.embeddings.encoder import Encoder
from ontoskills.embeddings.vectors import (
    missing_modules,
    read_manifest,
    read_modules,
    stored_vectors,
)
from ontoskills.intents import parse_intents
from tests.conftest import shared_path


def test_superpowers_modules_map_to_skills_and_missing_vectors(ontostore: Path) -> None:
    pkg = ontostore / "packages/obra/superpowers"
    manifest = read_manifest(pkg)
    modules = read_modules(pkg, manifest)
    assert len(modules) == 37  # every .ttl module of the package
    by_module = {m.module: m for m in modules}
    vc = by_module["brainstorming/visual-companion.ttl"]
    assert (vc.identifier, vc.skill) == ("visual-companion", "brainstorming")
    assert "show visual mockups in browser" in vc.intents
    stored = stored_vectors(pkg, modules)
    assert {v.module for v in stored if v.intent == "show visual mockups in browser"} == {
        "brainstorming/visual-companion.ttl"
    }
    assert all(v.vector.dtype == np.float32 for v in stored)
    missing = missing_modules(modules, stored)
    main_missing = {m.skill for m in missing if m.module.endswith("/ontoskill.ttl")}
    assert len(main_missing) == 7  # QUIRKS 6: 7 of the 14 skills have no stored vectors
    assert "brainstorming" in main_missing


def test_identifier_differing_from_skill_id(ontostore: Path) -> None:
    pkg = ontostore / "packages/skillsbench/mario-coin-counting"
    modules = read_modules(pkg, read_manifest(pkg))
    stored = stored_vectors(pkg, modules)
    ffmpeg = {v.module for v in stored if v.module.startswith("ffmpeg/")}
    assert ffmpeg and all(m.endswith(".ttl") for m in ffmpeg)


def test_real_model_reproduces_stored_vectors(ontostore: Path) -> None:
    models = shared_path("models", "model.onnx").parent
    enc = Encoder(models / "model.onnx", models / "tokenizer.json")
    files = sorted(ontostore.rglob("intents.json"))
    rng = random.Random(4)
    sample = []
    for path in rng.sample(files, 12):
        items = parse_intents(path.read_bytes(), source=str(path)).intents
        sample += rng.sample(list(items), min(2, len(items)))
    got = enc.encode([i.intent for i in sample])
    stored = np.asarray([i.embedding for i in sample], dtype=np.float32)
    cos = [float(c) for c in (got * stored).sum(axis=1)]
    assert min(cos) >= 0.999, cos
    single = enc.encode_one(sample[0].intent)  # the unpadded query path agrees too
    assert float(np.dot(single, got[0])) > 0.9999
