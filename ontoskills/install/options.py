"""The options of the verbs that place packages (install, ci, update), as the CLI passes them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class InstallOptions:
    with_embeddings: bool = False
    min_trust: str | None = None
    locked: bool = False
    frozen: bool = False
    strict: bool = False
    force: bool = False
    allow_trust_downgrade: bool = False
    model_path: str | None = None  # install --model PATH: a local encoder folder
