"""Shared set-up for the benchmarks: install a registry into a fresh home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

from ontoskills.config import Config  # noqa: E402
from ontoskills.install.lifecycle import set_enabled  # noqa: E402
from ontoskills.install.operations import install  # noqa: E402
from ontoskills.install.options import InstallOptions  # noqa: E402
from ontoskills.install.session import Session  # noqa: E402
from ontoskills.manifest import parse_index  # noqa: E402
from ontoskills.paths import Cache, Home  # noqa: E402
from ontoskills.registries import RegistryConfig, RegistryKind, detect_kind  # noqa: E402
from ontoskills.sources import SourceOptions  # noqa: E402


def shared_dir() -> Path:
    return Path(os.environ.get("ONTOSKILLS_SHARED", SHARED))


def install_store(work: Path, registry: Path, *, model: Path | None) -> Home:
    """Install every package, enable every skill; with a model folder, also the stored
    vectors and the model (`install --model`), which derives vectors for modules without."""
    home = Home(work / "home")
    cache = Cache(work / "cache")
    # Configured, not ad-hoc: an ad-hoc --registry is capped at community (issue 13 class
    # 9), and search ranks by the index's tiers as a user who added the registry sees them.
    config = Config(path=home.config_file)
    url = str(registry.absolute())
    config.registries.append(RegistryConfig("bench", url, detect_kind(url), None))
    config.save()
    session = Session(
        home=home,
        cache=cache,
        config=config,
        lockfile_path=home.default_lockfile,
        options=SourceOptions(cache=cache),
        registry_override="bench",
    )
    packages = [
        e.package_id
        for e in parse_index((registry / "index.json").read_bytes(), source="index.json")
    ]
    has_model = model is not None and (model / "model.onnx").is_file()
    opts = InstallOptions(with_embeddings=has_model, model_path=str(model) if has_model else None)
    install(session, packages, opts)
    set_enabled(session, packages, True)  # skillsbench ships default_enabled: false
    return home


SKILLMD = "skillmd-repos"  # ../shared folder of Agent Skills repositories (owner__repo/)


def skillmd_repos(folder: Path) -> dict[str, Path]:
    """package id -> repository folder, for every owner__repo under `folder`."""
    return {
        d.name.replace("__", "/", 1): d for d in sorted(folder.iterdir()) if "__" in d.name
    }


def install_skillmd(work: Path, folder: Path, *, model: Path | None) -> Home:
    """Every Agent Skills repository under `folder` as a configured registry of kind
    `skills` (read as folders), installed into one home with every skill enabled."""
    home = Home(work / "home")
    cache = Cache(work / "cache")
    config = Config(path=home.config_file)
    repos = skillmd_repos(folder)
    for n, (pid, path) in enumerate(repos.items()):
        url = str(path.absolute())
        config.registries.append(
            RegistryConfig(f"skills{n}", url, RegistryKind.SKILLS, None, package_id=pid)
        )
    config.save()
    session = Session(
        home=home,
        cache=cache,
        config=config,
        lockfile_path=home.default_lockfile,
        options=SourceOptions(cache=cache),
    )
    has_model = model is not None and (model / "model.onnx").is_file()
    opts = InstallOptions(with_embeddings=has_model, model_path=str(model) if has_model else None)
    install(session, list(repos), opts)
    set_enabled(session, list(repos), True)
    return home


def cli_install(registry: Path, home: Path, package_ids: list[str]) -> None:
    """Install through the real CLI in a subprocess (what a user or a served home sees)."""
    env = {**os.environ, "ONTOSKILLS_HOME": str(home), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "ontoskills", "--registry", str(registry), "install"]
    subprocess.run(
        [*cmd, *package_ids, "--quiet"],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
