"""The sentence encoder in the home: acquire, verify against the lock, place, load.

Sources, in order: `--model PATH` or config `[embeddings] path` (a folder with model.onnx +
tokenizer.json; source "path"), else the hub at a pinned revision (source "hub"; a registry
may supply the tokenizer, source "registry"). The result is recorded in the lock as a
LockedModel; a later difference from it is an IntegrityError (exit 4).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .. import jsonio
from ..config import Config, EmbeddingsSettings
from ..errors import IntegrityError, UsageError
from ..fsutil import atomic_write_bytes, make_dirs, sha256_file
from ..lockfile import LockedFile, LockedModel
from ..paths import Home
from ..progress import NullReporter, Reporter
from . import hub
from .encoder import DEFAULT_MODEL, Encoder, ModelError
from .place import link_or_copy

MODEL_FILES = ("model.onnx", "tokenizer.json")
LOCAL_REVISION = "local"
# model+tokenizer sha256 -> a loaded encoder: one ONNX session per process and model
_ENCODERS: dict[tuple[str, ...], Encoder] = {}


def _key_of(files: list[LockedFile]) -> tuple[str, ...]:
    return tuple(f.sha256 for f in sorted(files, key=lambda f: f.path))


def _key(record: LockedModel) -> tuple[str, ...]:
    return _key_of(record.files)


def model_paths(home: Home) -> dict[str, Path]:
    return {name: home.embeddings_dir / name for name in MODEL_FILES}


def verify_model(home: Home, expected: LockedModel, *, fast: bool = False) -> list[str]:
    """Problems of the installed model files vs the lock (empty list: all match)."""
    problems = []
    paths = model_paths(home)
    for f in expected.files:
        path = paths.get(f.path, home.embeddings_dir / f.path)
        if not path.is_file():
            problems.append(f"embeddings: {f.path} is missing")
            continue
        if fast:
            if path.stat().st_size != f.size:
                problems.append(f"embeddings: {f.path} differs from the lock (size)")
            continue
        digest, size = sha256_file(path)
        if (digest, size) != (f.sha256, f.size):
            problems.append(f"embeddings: {f.path} differs from the lock (sha256 {digest[:12]}...)")
    return problems


def _local_files(folder: Path) -> dict[str, Path]:
    folder = folder.expanduser()
    found = {name: folder / name for name in MODEL_FILES}
    missing = [n for n, p in found.items() if not p.is_file()]
    if missing:
        raise UsageError(
            f"model folder {folder} lacks {', '.join(missing)}",
            hint="point --model (or [embeddings] path) at a folder with model.onnx and "
            "tokenizer.json",
        )
    return found


def acquire(
    config: Config,
    *,
    tmp: Path,
    offline: bool = False,
    model_path: str | Path | None = None,
    registry_tokenizer: bytes | None = None,
    expected: LockedModel | None = None,
    reporter: Reporter | None = None,
    cache_dir: Path | None = None,
) -> tuple[dict[str, Path], LockedModel]:
    """Find the model files (local folder, or hub cache/download) and describe them.

    Validates the ONNX graph and measures the dimension; checks `expected` when given.
    Returns file name -> path (possibly inside the HF cache: read-only use) and the record.
    """
    reporter = reporter or NullReporter()
    local = str(model_path) if model_path else config.embeddings.path
    if local:
        src = _local_files(Path(local))
        model_id = config.embeddings.model or DEFAULT_MODEL
        revision, source = LOCAL_REVISION, "path"
    elif expected is not None and expected.source == "path":
        raise UsageError(
            "the locked embedding model came from a local folder that is not configured here",
            hint="pass --model PATH or set [embeddings] path in config.toml",
        )
    else:
        model_id = (
            (expected.model if expected else None) or config.embeddings.model or hub.DEFAULT_REPO
        )
        revision = (
            (expected.revision if expected else None)
            or config.embeddings.revision
            or hub.DEFAULT_REVISION
        )
        wanted = dict(hub.HUB_FILES)
        source = "hub"
        if registry_tokenizer is not None or (expected and expected.source == "registry"):
            if registry_tokenizer is None:
                raise UsageError("the locked tokenizer comes from the registry; it was not given")
            wanted.pop("tokenizer.json")
            source = "registry"
        reporter.note(
            f"embedding model {model_id}@{revision[:12]}{' (offline)' if offline else ''}"
        )
        src = hub.download(model_id, revision, hub.hub_settings(offline=offline), wanted)
        if registry_tokenizer is not None:
            src["tokenizer.json"] = tmp / "tokenizer.json"
            src["tokenizer.json"].write_bytes(registry_tokenizer)
    files = []
    for name in MODEL_FILES:
        digest, size = sha256_file(src[name])
        files.append(LockedFile(name, digest, size))
    stamp = _validated_stamp(cache_dir, files)
    dimension = _read_dimension(stamp)
    if dimension is None:  # never validated: load the graph, check it, measure the dimension
        encoder = Encoder(src["model.onnx"], src["tokenizer.json"], model_name=model_id)
        dimension = encoder.dimension
        _ENCODERS[_key_of(files)] = encoder  # same bytes as the placed copy: reuse it
        if stamp is not None:
            atomic_write_bytes(stamp, json.dumps({"dimension": dimension}).encode())
    record = LockedModel(model_id, revision, dimension, source, files)
    if expected is not None:
        _check_expected(record, expected)
    return src, record


def _validated_stamp(cache_dir: Path | None, files: list[LockedFile]) -> Path | None:
    """Where we remember that these exact bytes loaded fine (skips ~0.5 s of ONNX loading)."""
    if cache_dir is None:
        return None
    return cache_dir / "models" / ("-".join(_key_of(files)) + ".json")


def _read_dimension(stamp: Path | None) -> int | None:
    try:
        value = jsonio.loads_derived(stamp.read_bytes())["dimension"] if stamp else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) and value > 0 else None


def ensure_model(
    home: Home,
    *,
    config: Config,
    offline: bool = False,
    model_path: str | Path | None = None,
    registry_tokenizer: bytes | None = None,
    expected: LockedModel | None = None,
    reporter: Reporter | None = None,
    cache_dir: Path | None = None,
) -> LockedModel:
    """Make ontologies/system/embeddings hold a verified model; return its lock record.

    With `expected` (the lock's record) the result must match it byte for byte. An explicit
    `model_path` replaces the model, so callers pass expected=None with it.
    """
    reporter = reporter or NullReporter()
    local = str(model_path) if model_path else config.embeddings.path
    if (
        expected is not None
        and not verify_model(home, expected)
        and (local is None or expected.source == "path")
    ):
        return expected  # installed and intact: no network, no re-placing
    reporter.stage("preparing the embedding model")
    with tempfile.TemporaryDirectory(prefix=".model-", dir=_tmp_parent(home)) as tmp:
        src, record = acquire(
            config,
            tmp=Path(tmp),
            offline=offline,
            model_path=model_path,
            registry_tokenizer=registry_tokenizer,
            expected=expected,
            reporter=reporter,
            cache_dir=cache_dir,
        )
        for name in MODEL_FILES:  # link from the HF cache; copy a user's own folder
            link = record.source != "path" and not str(src[name]).startswith(tmp)
            link_or_copy(src[name], home.embeddings_dir / name, link=link)
    problems = verify_model(home, record)
    if problems:  # a concurrent writer, or a filesystem that lies: never record a bad model
        raise IntegrityError(problems[0], hint="run the command again")
    return record


def _tmp_parent(home: Home) -> Path:
    return make_dirs(home.embeddings_dir)


def _check_expected(got: LockedModel, expected: LockedModel) -> None:
    want = {f.path: f.sha256 for f in expected.files}
    have = {f.path: f.sha256 for f in got.files}
    if want != have or got.dimension != expected.dimension:
        differing = sorted(p for p in set(want) | set(have) if want.get(p) != have.get(p))
        raise IntegrityError(
            f"embedding model {got.model}@{got.revision[:12]} does not match the lock "
            f"({', '.join(differing) or 'dimension'} differ)",
            hint="if the change is intended, run `ontoskills install --with-embeddings --model "
            "PATH` (or delete [embeddings] from the lock) to record the new model",
        )


def model_folders(home: Home, config: Config) -> list[Path]:
    """Where `load_encoder` looks, in order: the home's verified copy, then a configured
    `[embeddings] path` folder."""
    folders = [home.embeddings_dir]
    if config.embeddings.path:
        folders.append(Path(config.embeddings.path).expanduser())
    return folders


def model_identity(home: Home, config: Config) -> str:
    """Changes when any file `load_encoder` could load appears, disappears or changes (by
    stat: cheap enough to check on every request of a running server)."""
    parts = []
    for folder in model_folders(home, config):
        for name in MODEL_FILES:
            try:
                st = os.stat(folder / name)
            except OSError:
                continue
            parts.append(f"{folder / name}:{st.st_size}:{st.st_mtime_ns}")
    if not parts:
        return "none"
    # The encoder's settings change every vector: a new pooling or prefix is a new model.
    # The defaults add nothing, so homes cached before these settings existed stay valid.
    # A configured model id decides which stored vectors are this encoder's (catalog/live.py).
    settings = config.embeddings.encoder_settings()
    if settings != EmbeddingsSettings().encoder_settings():
        parts.append(settings)
    if config.embeddings.model:
        parts.append(f"model={config.embeddings.model}")
    return ";".join(parts)


def load_encoder(home: Home, config: Config) -> Encoder | None:
    """The installed encoder (lazy: no ONNX session until first use), or None if absent."""
    for folder in model_folders(home, config):
        paths = {name: folder / name for name in MODEL_FILES}
        if all(p.is_file() for p in paths.values()):
            return configured_encoder(
                folder,
                config.embeddings,
                model_name=config.embeddings.model or DEFAULT_MODEL,
                optimized_dir=home.derived_dir / "encoder",
            )
    return None


def configured_encoder(
    folder: Path,
    settings: EmbeddingsSettings,
    *,
    model_name: str,
    optimized_dir: Path | None = None,
) -> Encoder:
    """The one place an Encoder gets `[embeddings]`' settings (pooling, prefixes, tokens,
    dimension): search, derived vectors and `export-embeddings` all encode through it, so no
    path writes vectors of a space the configured search does not read."""
    return Encoder(
        folder / "model.onnx",
        folder / "tokenizer.json",
        model_name=model_name,
        threads=settings.threads,
        optimized_dir=optimized_dir,
        pooling=settings.pooling,
        query_prefix=settings.query_prefix,
        passage_prefix=settings.passage_prefix,
        max_length=settings.max_tokens,
        dimension=settings.dimension,
    )


def _has_settings(encoder: Encoder, settings: EmbeddingsSettings) -> bool:
    return (
        encoder.pooling,
        encoder.query_prefix,
        encoder.passage_prefix,
        encoder.max_length,
        encoder.expected_dimension,
    ) == (
        settings.pooling,
        settings.query_prefix,
        settings.passage_prefix,
        settings.max_tokens,
        settings.dimension,
    )


def encoder_for(home: Home, config: Config, record: LockedModel | None) -> Encoder:
    """The installed encoder; reuses the session loaded while verifying the same model."""
    if (
        record is not None
        and _key(record) in _ENCODERS
        # the session acquire() loaded has the default settings: reuse it only if those are
        # the configured ones, else `export-embeddings` would derive vectors of another space
        and _has_settings(_ENCODERS[_key(record)], config.embeddings)
        and not verify_model(home, record, fast=True)
    ):
        return _ENCODERS[_key(record)]
    encoder = load_encoder(home, config)
    if encoder is None:
        raise ModelError(
            "no embedding model installed",
            hint="run `ontoskills install --with-embeddings` (or pass --model PATH)",
        )
    if record is not None:
        encoder.model_name = record.model
    return encoder
