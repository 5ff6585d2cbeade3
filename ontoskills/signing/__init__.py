"""Signed registries: TUF metadata written by `publish`, verified by every install.

Layout under a registry (TUF's, consistent_snapshot off: fixed names, one state per commit):

    metadata/root.json            the newest root (what --trust-on-first-use reads)
    metadata/<N>.root.json        every root version: clients walk rotations one by one
    metadata/targets.json         delegates every target to hashed bins (TAP 15 succinct roles)
    metadata/bins-<x>.json        the targets (path -> length + sha256) of one bin
    metadata/snapshot.json        the version (+ length, sha256) of targets.json and every bin
    metadata/timestamp.json       the version (+ length, sha256) of snapshot.json; short-lived

Targets are registry-relative paths: `index.json`, `index/...` (sparse index) and every file of
every package (its `package.json` included). Nothing here imports tuf: the modules that do
(`keys`, `repo`, `client`, `trust`, `check`) are imported only where a registry is signed.
"""

from __future__ import annotations

METADATA_DIR = "metadata"
ROOT_PATH = f"{METADATA_DIR}/root.json"
BINS_PREFIX = "bins"
ROLES = ("root", "targets", "snapshot", "timestamp", BINS_PREFIX)
# The keys a publish needs; root and targets keys can stay offline (PEP 458's split).
ONLINE_ROLES = (BINS_PREFIX, "snapshot", "timestamp")

# Upper bounds on what a client downloads per metadata file (endless-data attack). A bin of
# 10k targets is ~2 MB; a snapshot names every bin (~100 bytes each).
MAX_ROOT_BYTES = 512 * 1024
MAX_TIMESTAMP_BYTES = 16 * 1024
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
MAX_TARGETS_BYTES = 16 * 1024 * 1024


def versioned_root(version: int) -> str:
    return f"{METADATA_DIR}/{version}.root.json"


def is_metadata_path(relpath: str) -> bool:
    return relpath == METADATA_DIR or relpath.startswith(METADATA_DIR + "/")
