"""`publish DIR --registry oci://host/namespace`: a package version pushed as an OCI artifact,
then the index artifact re-pushed naming it (layout: sources/oci.py).

Order matters for readers: every blob, then the version's manifest (tag = version), then
the index (tag `index`), so a client that sees the new index finds everything it names. A
version tag that already exists is refused (exit 2) unless it holds these exact bytes; two
publishers racing on the index tag can lose one entry (the distribution API has no
conditional PUT): the later publish wins, and re-running the other restores it.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import urlencode, urljoin

from .. import jsonio, limits
from ..errors import NetworkError, NotFoundError
from ..fsutil import is_executable, sha256_bytes
from ..progress import Reporter
from ..registries import slug_for_url
from ..safety import safe_join, split_package_id
from ..sources import _oci
from ..sources.oci import (
    EXECUTABLE,
    FILE_TYPE,
    INDEX_CONFIG_TYPE,
    INDEX_FILE_TYPE,
    INDEX_TAG,
    PACKAGE_TYPE,
    TITLE,
    config_digest,
    index_with,
    layers,
)
from . import rules
from .files import walk_package
from .publish import LocalPackage, PublishOptions, PublishResult


def _descriptor(media_type: str, data: bytes, title: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "mediaType": media_type,
        "digest": "sha256:" + sha256_bytes(data),
        "size": len(data),
    }
    if title is not None:
        out["annotations"] = {TITLE: title}
    return out


def _artifact(config_type: str, config: bytes, layer_list: list[dict[str, Any]]) -> bytes:
    body = {
        "schemaVersion": 2,
        "mediaType": _oci.MANIFEST_TYPE,
        "artifactType": config_type,
        "config": _descriptor(config_type, config),
        "layers": layer_list,
    }
    return (json.dumps(body, indent=2, sort_keys=True) + "\n").encode()


# The write half of the distribution API: only publish pushes.
def _has_blob(client: _oci.OciClient, repo: str, digest: str) -> bool:
    resp = client.request("HEAD", client.url(f"{repo}/blobs/{digest}"), what=f"{repo} blob")
    resp.close()
    return resp.status_code == 200


def _push_blob(client: _oci.OciClient, repo: str, data: bytes) -> str:
    """A monolithic upload (POST, then PUT ?digest=), skipped when the registry has it."""
    digest = "sha256:" + sha256_bytes(data)
    if _has_blob(client, repo, digest):
        return digest
    what = f"upload to {repo}"
    resp = client.request("POST", client.url(f"{repo}/blobs/uploads/"), what=what)
    if resp.status_code != 202:
        client.check(resp, what)
        raise NetworkError(f"{client.name}: {what}: HTTP {resp.status_code}")
    location = urljoin(client.loc.base, resp.headers.get("Location", ""))
    sep = "&" if "?" in location else "?"
    resp = client.request(
        "PUT",
        f"{location}{sep}{urlencode({'digest': digest})}",
        headers={"Content-Type": "application/octet-stream"},
        content=data,
        what=what,
    )
    if resp.status_code != 201:
        client.check(resp, what)
        raise NetworkError(f"{client.name}: {what}: HTTP {resp.status_code}")
    return digest


def _put_manifest(client: _oci.OciClient, repo: str, tag: str, data: bytes) -> str:
    what = f"{repo}:{tag}"
    resp = client.request(
        "PUT",
        client.url(f"{repo}/manifests/{tag}"),
        headers={"Content-Type": _oci.MANIFEST_TYPE},
        content=data,
        what=what,
    )
    if resp.status_code != 201:
        detail = resp.text[:200]
        client.check(resp, what)
        raise NetworkError(f"{client.name}: {what}: HTTP {resp.status_code}: {detail}")
    return "sha256:" + sha256_bytes(data)


def _current_index(client: _oci.OciClient, repo: str) -> tuple[bytes | None, dict[str, Any]]:
    """(index.json, the config's packages map) as the registry has them now."""
    try:
        _, _, manifest = client.manifest(repo, INDEX_TAG)
    except NotFoundError:
        return None, {}
    where = f"{repo}:{INDEX_TAG}"
    cfg = config_digest(manifest, where, INDEX_CONFIG_TYPE)
    digest = layers(manifest, where)["index.json"][0]
    index = client.blob(repo, digest, max_bytes=limits.MAX_INDEX_BYTES, what=where)
    raw = jsonio.loads(
        client.blob(repo, cfg, max_bytes=limits.MAX_INDEX_BYTES, what=where), source=where
    )
    packages = raw.get("packages") if isinstance(raw, dict) else None
    return index, dict(packages) if isinstance(packages, dict) else {}


def publish_oci(pkg: LocalPackage, opts: PublishOptions, rep: Reporter) -> PublishResult:
    pid, version = pkg.manifest.package_id, pkg.manifest.version
    author, name = split_package_id(pid)
    loc = _oci.parse_location(opts.registry, allow_insecure_http=False)
    client = _oci.OciClient(
        loc,
        dict(os.environ),
        timeout=30.0,
        name=slug_for_url(opts.registry),
        plain_credentials=True,
    )
    try:
        index_repo, pkg_repo = loc.repo(), loc.repo(author, name)
        rep.stage(f"reading {index_repo}:{INDEX_TAG}")
        old_index, refs = _current_index(client, index_repo)
        previous = refs.get(pid, {}).get("version") if isinstance(refs.get(pid), dict) else None
        rules.check_version(pid, version, previous)
        existing_tier = _tier(old_index, pid)
        tier = rules.decide_tier(pid, existing_tier, opts.trust, own_registry=True)
        files = [(rel, safe_join(pkg.root, rel, "package file")) for rel in walk_package(pkg.root)]
        result = PublishResult(
            pid,
            version,
            opts.registry,
            "oci",
            trust_tier=tier,
            previous_version=previous,
            dry_run=opts.dry_run,
            files=[{"path": rel, "size": p.stat().st_size} for rel, p in files],
        )
        if opts.dry_run:
            return result
        rep.stage(f"pushing {pkg_repo}:{version}", total=len(files) + 1)
        layer_list = []
        for rel, path in files:
            data = path.read_bytes()
            _push_blob(client, pkg_repo, data)
            desc = _descriptor(FILE_TYPE, data, rel)
            if is_executable(path):
                desc["annotations"][EXECUTABLE] = "true"
            layer_list.append(desc)
            rep.advance()
        _push_blob(client, pkg_repo, pkg.data)
        digest = _put_manifest(
            client, pkg_repo, version, _artifact(PACKAGE_TYPE, pkg.data, layer_list)
        )
        rep.stage(f"updating {index_repo}:{INDEX_TAG}")
        entry = {
            "package_id": pid,
            "trust_tier": tier,
            "source_kind": "ontology",
            "manifest_path": f"packages/{pid}/package.json",
        }
        index = index_with(old_index, entry)
        refs[pid] = {"version": version, "digest": digest}
        config = (json.dumps({"packages": dict(sorted(refs.items()))}, indent=2) + "\n").encode()
        _push_blob(client, index_repo, index)
        _push_blob(client, index_repo, config)
        index_layer = _descriptor(INDEX_FILE_TYPE, index, "index.json")
        _put_manifest(
            client, index_repo, INDEX_TAG, _artifact(INDEX_CONFIG_TYPE, config, [index_layer])
        )
        result.commit = digest  # the version's manifest digest: what installs pin
        return result
    finally:
        client.close()


def _tier(index: bytes | None, pid: str) -> str | None:
    if index is None:
        return None
    from ..manifest import parse_index

    entry = parse_index(index, source="index.json").get(pid)
    return None if entry is None else entry.trust_tier
