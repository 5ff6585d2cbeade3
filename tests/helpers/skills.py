"""Installed homes for catalog/search tests: synthetic packages via the real CLI, or the
shared OntoStore subset with the real model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ontoskills.config import load_config
from ontoskills.paths import Home
from ontoskills.search.service import SkillService
from tests.conftest import REPO, CliRunner, shared_path
from tests.helpers.registry import OC, PackageSpec, SkillSpec, build_registry

SUB_MODULE = f"""@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix oc: <{OC}> .
oc:skill_acme_devtools_debugging_bisect a oc:Skill ;
    dcterms:identifier "bisect" ;
    oc:extends oc:skill_acme_devtools_debugging ;
    oc:hasAlias "git-bisect" ;
    oc:resolvesIntent "find the commit that introduced a regression" ;
    oc:hasDescription "Binary search through history" .
"""


def search_packages() -> list[PackageSpec]:
    """Small but shaped like the store: duplicate ids, sub-modules, Turtle-only aliases,
    identifiers that differ from the manifest id, disabled-by-default skills, tiers."""
    return [
        PackageSpec(
            id="acme/devtools",
            trust_tier="official",
            skills=[
                SkillSpec(
                    "debugging",
                    "Find the root cause of failing tests",
                    intents=("debug failing tests", "find root cause of a bug"),
                    aliases=("bug-hunt",),
                    extra_modules={"debugging/bisect.ttl": SUB_MODULE},
                ),
                SkillSpec(
                    "planning",
                    "Write an implementation plan",
                    intents=("write an implementation plan",),
                ),
                SkillSpec("pdf", "Create and edit PDF documents", intents=("create a pdf",)),
                SkillSpec(
                    "video-frames",
                    "Extract key frames from video with ffmpeg",
                    identifier="ffmpeg-keyframe-extraction",
                    path="ffmpeg/ontoskill.ttl",
                    intents=("extract keyframes from a video",),
                ),
            ],
            assets={"debugging/scripts/run.sh": (b"#!/bin/sh\necho run\n", True)},
        ),
        PackageSpec(
            id="other/docs",
            trust_tier="community",
            skills=[
                SkillSpec("pdf", "Create and edit PDF documents", intents=("create a pdf",)),
                SkillSpec(
                    "hidden-gem",
                    "Optimise database queries",
                    intents=("speed up slow sql queries",),
                    default_enabled=False,
                ),
            ],
        ),
    ]


def install_synthetic(cli: CliRunner, tmp_path: Path, *, model: bool = False) -> Path:
    """Install both packages; with `model`, also their (8-dim, synthetic) stored vectors and
    the real encoder via `install --model` (skips when ../shared is absent)."""
    registry = build_registry(tmp_path / "reg", search_packages())
    # configured, not ad-hoc: an ad-hoc --registry is capped at community (docs/CLI.md), and
    # these tests rank by the index's tiers (acme/devtools official, other/docs community)
    cli("registry", "add", "synthetic", str(registry), check=True)
    args = ["--registry", "synthetic", "install", "acme/devtools", "other/docs"]
    if model:
        args += ["--model", str(shared_path("models", "model.onnx").parent)]
    cli(*args, check=True)
    # The lock decides what is served (install currently enables every skill it installs).
    cli("disable", "other/docs/hidden-gem", check=True)
    return registry


_TEMPLATE: dict[str, Path] = {}


def installed_home(factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """The synthetic packages installed (once per session, through the real CLI), copied
    into this test's home: each test gets a private, identical tree in milliseconds."""
    if "home" not in _TEMPLATE:
        root = factory.mktemp("search-template")
        tenv = {
            **os.environ,
            "ONTOSKILLS_HOME": str(root / "home"),
            "ONTOSKILLS_CACHE_DIR": str(root / "cache"),
            "HF_HOME": str(root / "hf"),
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
        }
        for key in ("ONTOSKILLS_LOCKFILE", "ONTOSKILLS_REGISTRY"):
            tenv.pop(key, None)
        registry = build_registry(root / "reg", search_packages())
        for args in (  # configured (see install_synthetic): the index's tiers are kept
            ["registry", "add", "synthetic", str(registry)],
            ["--registry", "synthetic", "install", "acme/devtools", "other/docs"],
            ["disable", "other/docs/hidden-gem"],
        ):
            subprocess.run(
                [sys.executable, "-m", "ontoskills", *args],
                env=tenv,
                check=True,
                capture_output=True,
                stdin=subprocess.DEVNULL,
            )
        _TEMPLATE["home"] = root / "home"
    home = Path(env["ONTOSKILLS_HOME"])
    shutil.copytree(_TEMPLATE["home"], home, symlinks=True)
    return home


def service(env: dict[str, str], **kwargs: object) -> SkillService:
    home = Home.resolve(env["ONTOSKILLS_HOME"])
    return SkillService(home, home.default_lockfile, load_config(home.config_file), **kwargs)  # type: ignore[arg-type]


def place_model(env: dict[str, str]) -> None:
    """Copy the real encoder into the home (skips the test when ../shared is absent)."""
    models = shared_path("models", "model.onnx").parent
    target = Path(env["ONTOSKILLS_HOME"]) / "ontologies/system/embeddings"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copyfile(models / name, target / name)


def install_ontostore(
    cli: CliRunner, packages: list[str] | None = None, *, model: bool = True
) -> list[dict[str, object]]:
    """Install the shared OntoStore subset (all packages unless `packages`), with its stored
    vectors and the real model when `model`, enable every skill (skillsbench ships
    disabled); return the dev queries."""
    store = shared_path("ontostore", "index.json").parent
    ids = packages or [
        e["package_id"] for e in json.loads((store / "index.json").read_text())["packages"]
    ]
    extra = ["--model", str(shared_path("models", "model.onnx").parent)] if model else []
    cli("--registry", str(store), "install", *ids, *extra, check=True)
    cli("enable", *ids, check=True)
    lines = shared_path("queries-dev.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]
