"""Model acquisition from the Hugging Face hub, through huggingface_hub itself.

Files land in the standard HF cache (so a model the user already has is reused) at a pinned
commit. We read HF_ENDPOINT / HF_HOME / HF_HUB_CACHE / HF_TOKEN / HF_HUB_OFFLINE at call time
(huggingface_hub reads some of them only at import) and pass them explicitly.

The hub's ETag of an LFS file is the sha256 of its content, and huggingface_hub names cache
blobs by ETag: we re-hash every blob we return, so a corrupt download or a tampered cache is
an IntegrityError (and the bad blob is deleted so the next run fetches it again).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import AuthError, IntegrityError, NetworkError, NotFoundError, OntoskillsError
from ..fsutil import sha256_file

DEFAULT_REPO = "sentence-transformers/all-MiniLM-L6-v2"
# The repository's main as of the ONNX export (onnx/model.onnx); bump deliberately.
DEFAULT_REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
# our file name in ontologies/system/embeddings -> path inside the hub repository
HUB_FILES = {"model.onnx": "onnx/model.onnx", "tokenizer.json": "tokenizer.json"}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class HubSettings:
    endpoint: str | None
    cache_dir: Path
    token: str | None
    offline: bool


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def hub_settings(*, offline: bool = False) -> HubSettings:
    """The HF environment as it is now (tests and the CLI may change it after import)."""
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    return HubSettings(
        endpoint=(os.environ.get("HF_ENDPOINT") or "").rstrip("/") or None,
        cache_dir=Path(cache or os.path.join(hf_home, "hub")).expanduser(),
        token=os.environ.get("HF_TOKEN") or None,
        offline=offline or _truthy(os.environ.get("HF_HUB_OFFLINE")),
    )


def download(
    repo_id: str, revision: str, settings: HubSettings, files: dict[str, str] | None = None
) -> dict[str, Path]:
    """Fetch (or find in the cache) each file; returns our name -> verified cached path."""
    out: dict[str, Path] = {}
    for name, repo_path in (files or HUB_FILES).items():
        what = f"{repo_id}@{revision[:12]}: {repo_path}"
        path = _download_one(repo_id, revision, repo_path, settings)
        try:
            _verify_blob(path, what)
        except IntegrityError:
            if settings.offline:
                raise
            # the bad blob is gone: one fresh download repairs a corrupted cache
            path = _download_one(repo_id, revision, repo_path, settings)
            _verify_blob(path, what)
        out[name] = path
    return out


def _download_one(repo_id: str, revision: str, filename: str, s: HubSettings) -> Path:
    from huggingface_hub import errors as hf_errors
    from huggingface_hub import hf_hub_download  # before quieting: its import sets log levels

    where = f"{repo_id}/{filename} at {revision[:12]}"
    try:
        with _quiet_hub_logs():
            path = hf_hub_download(
                repo_id,
                filename,
                revision=revision,
                cache_dir=str(s.cache_dir),
                endpoint=s.endpoint,
                token=s.token,
                local_files_only=s.offline,
            )
    except hf_errors.LocalEntryNotFoundError:
        if s.offline:
            raise NetworkError(
                f"{where} is not in the Hugging Face cache ({s.cache_dir}) and we are offline",
                hint="run once online (without --offline / HF_HUB_OFFLINE), or pass --model PATH",
            ) from None
        raise NetworkError(
            f"cannot reach the model hub for {where}",
            hint="check your connection or HF_ENDPOINT, or pass --model PATH",
        ) from None
    except (hf_errors.GatedRepoError, hf_errors.RepositoryNotFoundError) as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            raise AuthError(
                f"the model hub refused {where} ({status})", hint="set HF_TOKEN"
            ) from None
        raise NotFoundError(f"model repository {repo_id} not found on the hub") from None
    except hf_errors.RevisionNotFoundError:
        raise NotFoundError(f"revision {revision} of {repo_id} not found on the hub") from None
    except hf_errors.EntryNotFoundError:
        raise NotFoundError(f"{where}: file not found on the hub") from None
    except hf_errors.HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            raise AuthError(
                f"the model hub refused {where} ({status})", hint="set HF_TOKEN"
            ) from None
        if status == 404:
            raise NotFoundError(f"{where}: not found on the hub") from None
        raise NetworkError(f"model hub error for {where}: {_first_line(exc)}") from None
    except OntoskillsError:
        raise
    except (OSError, ValueError) as exc:  # incl. "Consistency check failed" (truncated body)
        raise NetworkError(
            f"downloading {where} failed: {_first_line(exc)}", hint="retry; nothing was installed"
        ) from None
    except Exception as exc:  # httpx transport errors and friends
        raise NetworkError(f"downloading {where} failed: {_first_line(exc)}") from None
    return Path(path)


@contextlib.contextmanager
def _quiet_hub_logs() -> Iterator[None]:
    """huggingface_hub logs each retry and draws tqdm bars on stderr; domain code does not
    print (the CLI's reporter notes the download, and honours --quiet/NO_COLOR/CI)."""
    from huggingface_hub.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    bars_were_off = are_progress_bars_disabled()
    logger.setLevel(logging.ERROR)
    disable_progress_bars()
    try:
        yield
    finally:
        logger.setLevel(level)
        if not bars_were_off:
            enable_progress_bars()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _verify_blob(path: Path, what: str) -> None:
    """The blob's name is its ETag; for LFS files that is the content sha256: check it."""
    blob = path.resolve()
    if not _SHA256.match(blob.name):
        return  # a small git file: its ETag is a git oid; the lock records our sha256
    digest, _ = sha256_file(blob)
    if digest != blob.name:
        for p in (path, blob):  # never leave a bad blob for the next (offline) run
            with contextlib.suppress(OSError):
                p.unlink()
        raise IntegrityError(
            f"{what}: content sha256 {digest[:16]}... does not match the hub's {blob.name[:16]}...",
            hint="the download or the Hugging Face cache was corrupted; run the command again",
        )
