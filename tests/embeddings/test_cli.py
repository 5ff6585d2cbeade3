"""install/ci/remove/doctor --with-embeddings and export-embeddings through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.embeddings import hub
from ontoskills.embeddings.vectors import derived_path, load_vectors, read_derived
from ontoskills.paths import Home
from tests.conftest import CliRunner, shared_path
from tests.helpers.fakehub import FakeHub
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _npz(meta: dict[str, object], vectors: object) -> bytes:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, vectors=vectors, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    return buf.getvalue()


def _packages(dimension: int = 8) -> list[PackageSpec]:
    return [
        PackageSpec(
            id="acme/devtools",
            dimension=dimension,
            skills=[
                SkillSpec("debugging", intents=("debug failing tests", "find root cause")),
                SkillSpec("planning", intents=("write a plan",), vectors=False),  # QUIRKS 6
            ],
        )
    ]


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(tmp_path / "reg", _packages())


@pytest.fixture
def pinned_hub(fakehub: FakeHub) -> FakeHub:
    fakehub.commit = hub.DEFAULT_REVISION  # the CLI downloads our pinned revision by default
    return fakehub


def _install(cli: CliRunner, registry: Path, *args: str, **kw: object) -> dict[str, object]:
    proc = cli("--registry", str(registry), "install", "acme/devtools", *args, "--json", **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_install_with_embeddings_from_the_hub(
    cli: CliRunner, registry: Path, pinned_hub: FakeHub, env: dict[str, str], tiny_model: Path
) -> None:
    doc = _install(cli, registry, "--with-embeddings")
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    assert (home.embeddings_dir / "model.onnx").read_bytes() == (
        tiny_model / "model.onnx"
    ).read_bytes()
    lock = lockfile.load(home.default_lockfile)
    assert lock.embeddings is not None
    assert (lock.embeddings.model, lock.embeddings.revision) == (
        hub.DEFAULT_REPO,
        hub.DEFAULT_REVISION,
    )
    assert {f.path for f in lock.embeddings.files} == {"model.onnx", "tokenizer.json"}
    assert lock.packages["acme/devtools"].with_embeddings
    # the registry's pseudo-vectors are not what the model computes: a warning with the cosine
    assert any("cosine" in w for w in doc["warnings"])  # type: ignore[union-attr]
    vectors = load_vectors(home, "acme/devtools")
    derived = {(v.skill, v.intent) for v in vectors if v.derived}
    assert derived == {("planning", "write a plan")}
    assert {v.intent for v in vectors if not v.derived} == {
        "debug failing tests",
        "find root cause",
    }
    assert cli("doctor", check=True).returncode == 0
    gets = len(pinned_hub.gets)
    _install(cli, registry, "--with-embeddings")  # second run: nothing downloaded again
    assert len(pinned_hub.gets) == gets


def test_offline_reinstall_from_the_cache(
    cli: CliRunner, registry: Path, pinned_hub: FakeHub, env: dict[str, str], tmp_path: Path
) -> None:
    _install(cli, registry, "--with-embeddings")
    lock = Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock"
    pinned_hub.server.stop()
    (cached,) = (Path(env["ONTOSKILLS_CACHE_DIR"]) / "derived").glob("*.npz")
    meta, vectors = read_derived(cached)  # type: ignore[misc]
    meta["marker"] = "from-cache"  # proves the fresh home reuses it instead of encoding
    cached.write_bytes(_npz(meta, vectors))
    fresh = {"ONTOSKILLS_HOME": str(tmp_path / "home2"), "HF_HUB_OFFLINE": "1"}
    (tmp_path / "home2").mkdir()
    (tmp_path / "home2/ontoskills.lock").write_bytes(lock.read_bytes())
    proc = cli("--offline", "ci", extra_env=fresh)
    assert proc.returncode == 0, proc.stderr
    home2 = Home(tmp_path / "home2")
    assert (home2.embeddings_dir / "model.onnx").is_file()
    home1 = Home(Path(env["ONTOSKILLS_HOME"]))
    # the derived vectors came from the download cache, with the drift warning kept
    meta2, vectors2 = read_derived(derived_path(home2, "acme/devtools"))  # type: ignore[misc]
    assert meta2["marker"] == "from-cache"
    assert (vectors2 == read_derived(derived_path(home1, "acme/devtools"))[1]).all()  # type: ignore[index]
    assert "cosine" in proc.stderr
    assert (home2.default_lockfile).read_bytes() == lock.read_bytes()


def test_tampered_model_is_doctor_exit_4_and_ci_repairs(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    assert lock.embeddings is not None and lock.embeddings.source == "path"
    with open(home.embeddings_dir / "model.onnx", "ab") as fh:
        fh.write(b"tampered")
    assert (tiny_model / "model.onnx").stat().st_size != (
        home.embeddings_dir / "model.onnx"
    ).stat().st_size  # copied from a user's folder, never hardlinked into it
    proc = cli("doctor", "--json")
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["model_drift"]
    cli("--registry", str(registry), "install", "--model", str(tiny_model), check=True)
    assert cli("doctor").returncode == 0


def test_lock_model_mismatch_is_exit_4(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str], tmp_path: Path
) -> None:
    _install(cli, registry, "--model", str(tiny_model))
    other = tmp_path / "other-model"
    from tests.helpers.tinymodel import build_tiny_model

    build_tiny_model(other, seed=7)
    (Path(env["ONTOSKILLS_HOME"]) / "config.toml").write_text(f'[embeddings]\npath = "{other}"\n')
    (Path(env["ONTOSKILLS_HOME"]) / "ontologies/system/embeddings/model.onnx").unlink()
    proc = cli("ci")  # the lock pins the first model; the configured folder holds another
    assert proc.returncode == 4, proc.stderr
    assert "does not match the lock" in proc.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies/system/embeddings/model.onnx").exists()


def test_dimension_mismatch_installs_nothing(
    cli: CliRunner, tmp_path: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    reg = build_registry(tmp_path / "reg384", _packages(dimension=384))
    proc = cli("--registry", str(reg), "install", "acme/devtools", "--model", str(tiny_model))
    assert proc.returncode == 4
    assert "384-dim" in proc.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock").exists()
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/acme").exists()


def test_remove_drops_derived_vectors(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    assert derived_path(home, "acme/devtools").is_file()
    cli("remove", "acme/devtools", check=True)
    assert not derived_path(home, "acme/devtools").exists()


def test_export_installed_package(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    derived_path(home, "acme/devtools").unlink()
    proc = cli("doctor", "--json")
    assert proc.returncode == 1
    assert "export-embeddings acme/devtools" in json.dumps(json.loads(proc.stdout)["problems"])
    before = {p: p.read_bytes() for p in (home.package_dir("acme/devtools")).rglob("*.json")}
    out = cli("export-embeddings", "acme/devtools", "--json", check=True)
    assert json.loads(out.stdout)["derived"] == {"acme/devtools": 1}
    assert {p: p.read_bytes() for p in before} == before  # verified files untouched
    assert cli("doctor").returncode == 0
    assert cli("export-embeddings", "acme/nothing").returncode == 7


def test_export_registry_tree(
    cli: CliRunner, registry: Path, tiny_model: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    proc = cli(
        "export-embeddings",
        "--ontology-root",
        str(registry / "packages"),
        "--output-dir",
        str(out_dir),
        "--model",
        str(tiny_model),
        "--json",
        check=True,
    )
    doc = json.loads(proc.stdout)
    assert doc["modules"] == 2 and doc["intents"] == 3
    assert (out_dir / "model.onnx").read_bytes() == (tiny_model / "model.onnx").read_bytes()
    planning = json.loads((out_dir / "acme/devtools/planning/intents.json").read_text())
    assert planning["dimension"] == 8
    assert [i["skills"] for i in planning["intents"]] == [["planning"]]
    assert cli("export-embeddings", "--ontology-root", str(registry)).returncode == 2


def test_export_real_store_fills_every_module(
    cli: CliRunner, ontostore: Path, tmp_path: Path
) -> None:
    models = shared_path("models", "model.onnx").parent
    out_dir = tmp_path / "out"
    doc = json.loads(
        cli(
            "export-embeddings",
            "--ontology-root",
            str(ontostore / "packages"),
            "--output-dir",
            str(out_dir),
            "--model",
            str(models),
            "--json",
            check=True,
            timeout=300,
        ).stdout
    )
    from ontoskills.embeddings.vectors import read_modules

    declared = [m for m in read_modules(ontostore / "packages") if m.intents]
    assert doc["modules"] == len(declared)
    exported = set()
    for rel in doc["files"]:
        for item in json.loads((out_dir / rel).read_text())["intents"]:
            exported.add((rel.rsplit("/", 1)[0], item["skills"][0]))
    assert {(m.folder, m.identifier) for m in declared} <= exported


def test_superpowers_with_embeddings_real_model_then_offline(
    cli: CliRunner,
    ontostore: Path,
    hub_server: object,
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's "done when": registry + real model from a fake hub, then again offline."""
    from tests.embeddings.conftest import HUB_MAP

    models = shared_path("models", "model.onnx").parent
    fake = FakeHub(hub_server, commit=hub.DEFAULT_REVISION).add_folder(models, HUB_MAP).install()  # type: ignore[arg-type]
    monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
    proc = cli(
        "--registry", str(ontostore), "install", "obra/superpowers", "--with-embeddings", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["warnings"] == []  # stored vectors reproduced (>= 0.99)
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    assert lock.embeddings is not None and lock.embeddings.dimension == 384
    vectors = load_vectors(home, "obra/superpowers")
    assert len({v.module for v in vectors if v.derived}) == 21
    assert len({v.skill for v in vectors}) == 14  # every skill is reachable semantically
    fake.server.stop()  # type: ignore[attr-defined]
    again = cli(
        "--offline",
        "--registry",
        str(ontostore),
        "install",
        "obra/superpowers",
        "--with-embeddings",
        extra_env={"ONTOSKILLS_HOME": str(tmp_path / "home2"), "HF_HUB_OFFLINE": "1"},
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "home2/ontoskills.lock").read_bytes() == home.default_lockfile.read_bytes()


def test_update_rederives_changed_packages(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    before = {v.intent for v in load_vectors(home, "acme/devtools") if v.derived}
    assert before == {"write a plan"}
    packages = _packages()
    packages[0].skills[1] = SkillSpec(
        "planning", intents=("write a plan", "plan a release"), vectors=False
    )
    build_registry(registry, packages)
    proc = cli("update", "--json")
    assert proc.returncode == 0, proc.stderr
    after = {v.intent for v in load_vectors(home, "acme/devtools") if v.derived}
    assert after == {"write a plan", "plan a release"}
    assert cli("doctor").returncode == 0


def test_cached_encode_reuses_derived_vectors(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    from ontoskills.config import Config
    from ontoskills.embeddings.model import load_encoder
    from ontoskills.embeddings.vectors import cached_encode

    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    assert lock.embeddings is not None
    model_sha = next(f.sha256 for f in lock.embeddings.files if f.path == "model.onnx")
    encoder = load_encoder(home, Config(path=home.config_file))
    assert encoder is not None
    asked: list[list[str]] = []

    def encode(texts: list[str]):  # type: ignore[no-untyped-def]
        asked.append(list(texts))
        return encoder.encode(texts)

    run = cached_encode(home, encode, model_sha)
    out = run(["write a plan", "review code"])
    assert asked == [["review code"]]  # the derived one came from disk
    assert float(out[0] @ encoder.encode_one("write a plan")) > 0.9999
    assert cached_encode(home, encode, "0" * 64)(["write a plan"]).shape == (1, 8)
    assert asked[-1] == ["write a plan"]  # another model's data is not used


def test_post_commit_problems_are_warnings(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    from ontoskills.config import Config
    from ontoskills.embeddings.sync import finish

    _install(cli, registry, "--model", str(tiny_model))
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    derived_path(home, "acme/devtools").unlink()
    (home.embeddings_dir / "model.onnx").write_bytes(b"not a model")
    warnings = finish(home, Config(path=home.config_file), lock)
    assert len(warnings) == 1 and warnings[0].startswith("acme/devtools: embeddings:")


def test_install_with_a_model_builds_the_search_index_before_the_first_search(
    cli: CliRunner, registry: Path, tiny_model: Path, env: dict[str, str]
) -> None:
    """The first index build encodes every description: install pays it, not the first
    search or the first MCP call of a freshly started server."""
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    index, cache = home.derived_dir / "search-index", home.derived_dir / "vector-cache"
    cli("--registry", str(registry), "install", "acme/devtools", check=True)
    assert not index.exists() and not cache.exists()  # no encoder: nothing worth warming
    _install(cli, registry, "--model", str(tiny_model))
    assert any(index.iterdir()) and any(cache.glob("*.npy"))
    built = {p.name: p.stat().st_mtime_ns for p in index.iterdir()}
    proc = cli("search", "debug failing tests", "--mode", "hybrid", "--json", check=True)
    assert json.loads(proc.stdout)["results"][0]["skill"] == "acme/devtools/debugging"
    assert {p.name: p.stat().st_mtime_ns for p in index.iterdir()} == built  # reused as is


def test_the_hint_install_with_embeddings_fetches_them_from_the_locks_registry(
    cli: CliRunner, registry: Path, pinned_hub: FakeHub, env: dict[str, str], tiny_model: Path
) -> None:
    """What the "no vectors" hints say, run as written: no package named, no --registry.
    It used to restore the lock and change nothing (with_embeddings stayed false); now the
    locked package is fetched again with its vectors from the registry the lock names (the
    configured default registry is never asked: it does not have acme/devtools)."""
    _install(cli, registry)
    semantic = cli("search", "debug failing tests", "--mode", "semantic")
    assert semantic.returncode == 2 and "install --with-embeddings" in semantic.stderr
    proc = cli("install", "--with-embeddings", "--json")
    assert proc.returncode == 0, proc.stderr
    home = Home(Path(env["ONTOSKILLS_HOME"]))
    lock = lockfile.load(home.default_lockfile)
    assert lock.packages["acme/devtools"].with_embeddings and lock.embeddings is not None
    assert (home.embeddings_dir / "model.onnx").is_file()
    assert {v.intent for v in load_vectors(home, "acme/devtools") if not v.derived} == {
        "debug failing tests",
        "find root cause",
    }
    assert cli("search", "debug failing tests", "--mode", "semantic", check=True).returncode == 0
    again = cli("install", "--with-embeddings", "--json", check=True)  # now a plain restore
    changes = json.loads(again.stdout)["changes"]
    assert [c["action"] for c in changes] == ["unchanged"], changes
