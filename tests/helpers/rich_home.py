"""One home (installed once per session through the real CLI) with skills of every size the
context budget must cope with: a real-shaped skill, a tiny one, a huge section tree, deep
knowledge lists, giant code blocks and a single 5 MB paragraph."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry, iri_name
from tests.helpers.richskill import Rich, Sec, body, rich_package, sample_rich, words

SKILLS = {
    "pdf": "acme/docs/pdf",
    "tiny": "acme/huge/tiny",
    "tree": "acme/huge/tree",
    "rules": "acme/huge/rules",
    "code": "acme/huge/code",
    "paragraph": "acme/huge/paragraph",
}
BIG_PARAGRAPH = words(700_000, "p")  # ~5 MB, one literal


def _huge() -> PackageSpec:
    def skill(
        sid: str, rich: Rich, description: str = "", intents: tuple[str, ...] = ()
    ) -> SkillSpec:
        subject = f"oc:{iri_name('acme', 'huge', sid)}"
        return SkillSpec(
            sid,
            description or f"The {sid} skill",
            intents=intents or (f"use {sid}",),
            body=body(subject, rich),
        )

    tree = Rich(
        sections=[
            Sec(
                f"Chapter {c}",
                [("p", f"Chapter {c} intro.")],
                [
                    Sec(
                        f"Chapter {c} part {p}",
                        [
                            ("p", words(250, f"c{c}p{p}w")),
                            ("list", *[f"c{c}p{p} item {i}" for i in range(5)]),
                        ],
                        [
                            Sec(f"Detail {c}.{p}.{d}", [("p", words(60, f"d{c}{p}{d}w"))], level=3)
                            for d in range(3)
                        ],
                        level=2,
                    )
                    for p in range(15)
                ],
            )
            for c in range(10)
        ]
    )
    rules = Rich(
        knowledge=[
            (
                ["CRITICAL", "HIGH", "MEDIUM", "LOW", ""][i % 5],
                "Constraint",
                f"Rule {i}: " + words(20, f"r{i}w"),
                f"context {i}",
                f"rationale {i} " + words(10, f"q{i}w"),
            )
            for i in range(5_000)
        ]
    )
    tricky = "print('```')\n" + "x = '````'\n" * 3
    code = Rich(
        sections=[
            Sec(
                "Code",
                [
                    (
                        "code",
                        "python",
                        "\n".join(f"line_{i} = {i}  # " + "c" * 60 for i in range(15_000)),
                    ),
                    ("code", "markdown", tricky),
                    ("code", "", "echo small"),
                ],
            )
        ]
    )
    paragraph = Rich(sections=[Sec("One paragraph", [("p", BIG_PARAGRAPH)])])
    return PackageSpec(
        id="acme/huge",
        skills=[
            skill("tiny", Rich(knowledge=[("HIGH", "Constraint", "Be small.", "", "")])),
            skill("tree", tree),
            skill("rules", rules),
            skill("code", code),
            skill(
                "paragraph",
                paragraph,
                description="A skill whose whole body is one paragraph. " + words(3_000, "desc"),
                intents=tuple(f"intent number {i} about paragraphs" for i in range(400)),
            ),
        ],
    )


_TEMPLATE: dict[str, Path] = {}


def rich_home(factory: pytest.TempPathFactory) -> Path:
    """The installed template home (read-only for tests: copy it before changing it)."""
    if "home" not in _TEMPLATE:
        root = factory.mktemp("rich-home")
        env = {
            **os.environ,
            "ONTOSKILLS_HOME": str(root / "home"),
            "ONTOSKILLS_CACHE_DIR": str(root / "cache"),
            "PYTHONPATH": str(REPO),
            "NO_COLOR": "1",
        }
        for key in ("ONTOSKILLS_LOCKFILE", "ONTOSKILLS_REGISTRY"):
            env.pop(key, None)
        registry = build_registry(root / "reg", [rich_package(sample_rich()), _huge()])
        install = ["--registry", str(registry), "install", "acme/docs", "acme/huge", "--quiet"]
        subprocess.run(
            [sys.executable, "-m", "ontoskills", *install],
            env=env,
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        _TEMPLATE["home"] = root / "home"
    return _TEMPLATE["home"]


def copy_home(factory: pytest.TempPathFactory, target: Path) -> Path:
    shutil.copytree(rich_home(factory), target, symlinks=True)
    return target
