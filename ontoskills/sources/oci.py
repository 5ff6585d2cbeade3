"""A registry kept in an OCI registry (Harbor, GHCR, ECR, ACR, Artifactory, CNCF
distribution): `oci://host[:port]/namespace` (docs/PUBLISHING.md "OCI registries").

Layout (what publish/oci.py pushes):
- `<namespace>:index` (repository `namespace`, tag `index`): an artifact whose config
  (`application/vnd.ontoskills.index.config.v1+json`) maps every package to the digest of
  its current version's manifest, and whose one layer is the registry's `index.json`;
- `<namespace>/<author>/<pkg>:<version>`: one artifact per package version, config =
  its `package.json` (`application/vnd.ontoskills.package.v1+json`), one layer per file
  (`application/vnd.ontoskills.file.v1`, path in `org.opencontainers.image.title`,
  `sh.ontoskills.executable: "true"` on executables).

`load_index` reads the index artifact once and pins every later read to the package
manifests' digests it names, so one command reads one consistent state even while someone
publishes; every blob is checked against its digest as it streams (exit 4), and a file's
digest is its sha256, which the lock records.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import FormatError, NotFoundError, UsageError
from ..manifest import parse_index
from ..registries import RegistryConfig, RegistryKind
from ..safety import check_relpath, split_package_id
from ._oci import OciClient, check_digest, parse_location
from .base import BaseSource, IndexSnapshot, RemoteFile, SourceOptions, parse_registry_index

INDEX_TAG = "index"
INDEX_CONFIG_TYPE = "application/vnd.ontoskills.index.config.v1+json"
INDEX_FILE_TYPE = "application/vnd.ontoskills.index.v1+json"
PACKAGE_TYPE = "application/vnd.ontoskills.package.v1+json"
FILE_TYPE = "application/vnd.ontoskills.file.v1"
TITLE = "org.opencontainers.image.title"
EXECUTABLE = "sh.ontoskills.executable"
PACKAGES = "packages/"


def layers(manifest: dict[str, Any], where: str) -> dict[str, tuple[str, int, bool]]:
    """title -> (digest, size, executable) of an artifact's layers (validated)."""
    out: dict[str, tuple[str, int, bool]] = {}
    raw = manifest.get("layers")
    if not isinstance(raw, list) or len(raw) > limits.MAX_PACKAGE_FILES:
        raise FormatError(f"{where}: malformed layers")
    for layer in raw:
        notes = layer.get("annotations") if isinstance(layer, dict) else None
        title = notes.get(TITLE) if isinstance(notes, dict) else None
        size = layer.get("size") if isinstance(layer, dict) else None
        if not isinstance(title, str) or not isinstance(size, int) or isinstance(size, bool):
            raise FormatError(f"{where}: a layer without a title or size")
        check_relpath(title, f"layer title in {where}")
        if title in out:
            raise FormatError(f"{where}: two layers named {title}")
        assert isinstance(layer, dict) and isinstance(notes, dict)
        out[title] = (
            check_digest(layer.get("digest"), where),
            size,
            notes.get(EXECUTABLE) == "true",
        )
    return out


def config_digest(manifest: dict[str, Any], where: str, media_type: str) -> str:
    config = manifest.get("config")
    if not isinstance(config, dict) or config.get("mediaType") != media_type:
        raise FormatError(f"{where}: not an ontoskills artifact (config {media_type} expected)")
    return check_digest(config.get("digest"), where)


class OciSource(BaseSource):
    kind = RegistryKind.OCI
    parallel_fetch = True

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        super().__init__(config, options)
        self.loc = parse_location(config.url, options.allow_insecure_http)
        if not self.loc.namespace:
            raise UsageError(
                f"registry {config.name}: an OCI registry URL needs a namespace",
                hint="write oci://host[:port]/namespace",
            )
        if options.offline:
            raise UsageError(
                f"registry {config.name} is an OCI registry: --offline cannot read it",
                hint="mirror it into a folder first (`ontoskills mirror`)",
            )
        import os

        from ._auth import origin_of

        env = options.env or dict(os.environ)
        self.client = OciClient(
            self.loc,
            env,
            timeout=options.timeout,
            name=config.name,
            plain_credentials=origin_of(config.url) in options.token_origins,
            retries=options.retries,
            deadline=options.deadline,
        )
        self._index: bytes | None = None
        self._refs: dict[str, str] = {}  # package id -> manifest digest (pinned by the index)
        self._packages: dict[str, tuple[str, dict[str, tuple[str, int, bool]]]] = {}
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- the index
    def _load(self) -> bytes:
        with self._lock:
            if self._index is None:
                repo = self.loc.repo()
                where = f"{self.config.name}: {repo}:{INDEX_TAG}"
                _, _, manifest = self.client.manifest(repo, INDEX_TAG)
                cfg = config_digest(manifest, where, INDEX_CONFIG_TYPE)
                files = layers(manifest, where)
                if "index.json" not in files:
                    raise FormatError(f"{where}: no index.json layer")
                digest, _, _ = files["index.json"]
                what = f"{repo} index.json"
                data = self.client.blob(repo, digest, max_bytes=limits.MAX_INDEX_BYTES, what=what)
                refs = self._read_refs(repo, cfg, where)
                self._refs, self._index = refs, data
            return self._index

    def _read_refs(self, repo: str, digest: str, where: str) -> dict[str, str]:
        from .. import jsonio

        raw = jsonio.loads(
            self.client.blob(repo, digest, max_bytes=limits.MAX_INDEX_BYTES, what=where),
            source=where,
        )
        pkgs = raw.get("packages") if isinstance(raw, dict) else None
        if not isinstance(pkgs, dict):
            raise FormatError(f"{where}: config has no packages map")
        out = {}
        for pid, ref in pkgs.items():
            split_package_id(pid, f"package id in {where}")
            out[pid] = check_digest(ref.get("digest") if isinstance(ref, dict) else None, where)
        return out

    def load_index(self) -> IndexSnapshot:
        data = self._load()
        index = parse_registry_index(self.config, data)
        return IndexSnapshot(index=index, sha256=hashlib.sha256(data).hexdigest())

    # ----------------------------------------------------------------- packages
    def _package(self, relpath: str) -> tuple[str, str, str]:
        """packages/<author>/<pkg>/<rest> -> (package id, its repository, rest)."""
        parts = relpath.split("/")
        if len(parts) < 4 or parts[0] != PACKAGES.rstrip("/"):
            raise NotFoundError(f"{self.config.name}: {relpath} not found (not a package file)")
        pid = f"{parts[1]}/{parts[2]}"
        return pid, self.loc.repo(parts[1], parts[2]), "/".join(parts[3:])

    def _files(self, pid: str, repo: str) -> tuple[str, dict[str, tuple[str, int, bool]]]:
        self._load()
        with self._lock:
            if pid not in self._packages:
                ref = self._refs.get(pid)
                if ref is None:
                    raise NotFoundError(f"{self.config.name}: {pid} is not in the registry")
                where = f"{self.config.name}: {repo}@{ref[:19]}"
                _, _, manifest = self.client.manifest(repo, ref)
                cfg = config_digest(manifest, where, PACKAGE_TYPE)
                self._packages[pid] = (cfg, layers(manifest, where))
            return self._packages[pid]

    def _blob(self, relpath: str) -> tuple[str, str, int]:
        pid, repo, rest = self._package(relpath)
        cfg, files = self._files(pid, repo)
        if rest == "package.json":
            return repo, cfg, -1
        if rest not in files:
            raise NotFoundError(f"{self.config.name}: {relpath} not found")
        digest, size, _ = files[rest]
        return repo, digest, size

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        if relpath == "index.json":
            return self._load()
        repo, digest, _ = self._blob(relpath)
        return self.client.blob(repo, digest, max_bytes=max_bytes, what=relpath)

    def probe(self, relpath: str, *, max_bytes: int) -> bytes | None:
        if not relpath.startswith(PACKAGES) and relpath != "index.json":
            return None  # no signed metadata, sparse index or embeddings/ in this layout
        return super().probe(relpath, max_bytes=max_bytes)

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        repo, digest, _ = self._blob(relpath)
        size = self.client.blob_to(repo, digest, dest, max_bytes=max_bytes, what=relpath)
        return digest.removeprefix("sha256:"), size

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        pid, repo, _ = self._package(f"{package_root}/package.json")
        _, files = self._files(pid, repo)
        return [RemoteFile(p, size, exe) for p, (_, size, exe) in sorted(files.items())]

    def close(self) -> None:
        self.client.close()


def index_with(old: bytes | None, entry: dict[str, Any]) -> bytes:
    """index.json with `entry` added or replaced (publish), validated like any index."""
    import json

    from .. import jsonio

    packages: list[Any] = []
    if old is not None:
        raw = jsonio.loads(old, source="index.json", max_bytes=limits.MAX_INDEX_BYTES)
        packages = list(raw.get("packages", [])) if isinstance(raw, dict) else []
    packages = [p for p in packages if p.get("package_id") != entry["package_id"]] + [entry]
    packages.sort(key=lambda p: str(p.get("package_id")))
    data = (json.dumps({"packages": packages}, indent=2) + "\n").encode()
    parse_index(data, source="index.json")
    return data
