"""The installed catalog over time: when to reload, from what, and with which encoder.

`LiveCatalog` owns the catalog's lifecycle so that search/service.py only ranks:

- the signature (stats of the lock, the local skills, the model files and the vectors
  `install --with-embeddings` derived), cheap enough for every `refresh()`: unchanged means
  nothing is read;
- the lock (lockcache.py), verification (verify.py), the snapshot key and the snapshot
  (snapshot.py), or a rebuild from the tree (loader.py) with the encoder behind the vector
  cache (vectorcache.py) for intents that ship no vectors;
- the encoder, loaded on first use and replaced when the model files change.

The consumer's index (search's ranker) is made by the `index` callback on every new view:
from a snapshot (`fresh=False`; returning None means its stored postings do not fit, and the
catalog rebuilds from the tree) or from the tree (`fresh=True`; the callback may store what it
computed in `data`, e.g. BM25 postings, before the snapshot is written).

Thread-safety: a reader takes `view` once and uses that immutable object for the whole
request; `refresh()` builds a new view under a lock (reloads are serialised) and swaps it in
one assignment. A failed reload keeps the last good view (its `problems` say why) and is
tried again on the next `refresh()`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from ..config import Config
from ..embeddings.encoder import Encoder
from ..embeddings.model import load_encoder, model_identity
from ..embeddings.vectors import derived_identity
from ..errors import OntoskillsError
from ..lockfile import Lockfile
from ..paths import Home
from ..progress import Reporter
from ..words import plural
from .local import local_skill_files
from .lockcache import load_lock
from .model import CatalogData
from .snapshot import load_snapshot, save_snapshot, snapshot_key
from .vectorcache import VectorCache
from .verify import check_verify_mode, verify_tree

IndexT = TypeVar("IndexT")  # what the consumer makes of a view (search: the ranker)
Stat = tuple[int, int, int]  # mtime_ns, size, inode: an atomic replace changes the inode
EncoderFactory = Callable[[], Encoder | None]
Indexer = Callable[[CatalogData, bool], IndexT | None]
# Builds and saves the snapshot for the current tree somewhere else (a child process, so a
# long-lived server never holds what a build allocates); True when it ran to the end.
Rebuilder = Callable[[], bool]
RETRY_MOVED = 2.0  # seconds before a tree caught changing is built again (same signature)
CATCH_UP = 3  # reload attempts per refresh while the tree keeps moving under the child


class _TreeMoved(Exception):
    """A child built a tree other than the one this reload was for."""


def _stat(path: Path) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True)
class Signature:
    """What the catalog is made of, by stat: equal signatures mean an equal catalog."""

    lock: Stat | None
    local: tuple[tuple[str | int, ...], ...]  # (path, *stat) of every local skill file
    model: str  # embeddings/model.model_identity
    derived: str  # embeddings/vectors.derived_identity

    @classmethod
    def of(cls, home: Home, lockfile: Path, config: Config) -> Signature:
        local = tuple((str(p), *(_stat(p) or ())) for p in local_skill_files(home))
        return cls(_stat(lockfile), local, model_identity(home, config), derived_identity(home))


class EncoderSlot:
    """The encoder of one model identity, loaded on first use (ONNX is costly to start).

    Views of the same model share a slot; a changed model gets a new one, so a request still
    holding the old view keeps the encoder its vectors were made with."""

    def __init__(self, factory: EncoderFactory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._loaded = False
        self._encoder: Encoder | None = None

    def get(self) -> Encoder | None:
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._encoder = self._factory()
                    self._loaded = True
        return self._encoder


@dataclass(frozen=True)
class View(Generic[IndexT]):
    """One consistent state of the catalog: never changed after it is published, except
    that `data.problems` may gain a line (a failed reload, a dimension mismatch)."""

    signature: Signature
    data: CatalogData
    index: IndexT
    encoder: EncoderSlot
    rebuilt: bool  # made from the tree (True) or read back from the snapshot
    lock: Lockfile  # the lock this view was made from (per-file hashes: the Skills extension)


class LiveCatalog(Generic[IndexT]):
    def __init__(
        self,
        home: Home,
        lockfile: Path,
        config: Config,
        *,
        index: Indexer[IndexT],
        verify: str = "full",
        encoder_factory: EncoderFactory | None = None,
        rebuild: Rebuilder | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        """reporter: told when this first view is built from the tree (seconds to a minute
        for a large home, see docs/PERFORMANCE.md) rather than read back; later reloads (a
        server's) report nothing."""
        self.home = home
        self.lockfile = lockfile
        self.config = config
        self.verify = check_verify_mode(verify)
        self._index = index
        self._factory = encoder_factory or (lambda: load_encoder(home, config))
        self._rebuild = rebuild
        self._moved: tuple[Signature, float] | None = None  # (signature, when it was tried)
        self._lock = threading.Lock()
        self._view: View[IndexT] = self._load(Signature.of(home, lockfile, config), None, reporter)

    @property
    def view(self) -> View[IndexT]:
        return self._view

    def encoder(self) -> Encoder | None:
        return self._view.encoder.get()

    def refresh(self) -> bool:
        """Reload when the lock, the local skills or the model changed; True if reloaded."""
        signature = Signature.of(self.home, self.lockfile, self.config)
        if self._view.signature == signature or self._waiting(signature):
            return False
        with self._lock:
            old = self._view
            for _ in range(CATCH_UP):
                if old.signature == signature or self._waiting(signature):
                    return False  # another thread reloaded (or tried) while we waited
                try:
                    self._view = self._load(signature, old)
                except _TreeMoved:
                    self._moved = (signature, time.monotonic())
                    # The child built the tree as it is now, not as it was when this reload
                    # began (an install landed meanwhile): its snapshot is under the newer
                    # signature's key. Catch up rather than wait: under back-to-back installs
                    # a reload that only takes its own signature would never land.
                    signature = Signature.of(self.home, self.lockfile, self.config)
                    continue
                except OntoskillsError as exc:
                    # Keep serving what we had (e.g. a lock caught mid-edit); retried next call.
                    if str(exc) not in old.data.problems:
                        old.data.problems.append(str(exc))
                    return False
                return True
            return False

    def _waiting(self, signature: Signature) -> bool:
        moved = self._moved
        return (
            moved is not None
            and moved[0] == signature
            and time.monotonic() - moved[1] < RETRY_MOVED
        )

    def _load(
        self, signature: Signature, old: View[IndexT] | None, reporter: Reporter | None = None
    ) -> View[IndexT]:
        same_model = old is not None and old.signature.model == signature.model
        slot = old.encoder if old is not None and same_model else EncoderSlot(self._factory)
        lock, lock_digest = load_lock(self.lockfile, self.home.derived_dir)
        verification = verify_tree(self.home, lock, self.verify)
        encoder = slot.get()
        key = snapshot_key(
            lock_digest,
            str(self.home.root),
            repr(sorted((p, sorted(v)) for p, v in verification.bad.items())),
            repr(signature.local),
            signature.model,
            signature.derived,
            "encoder" if encoder is not None else "no-encoder",
        )
        data = load_snapshot(self.home.derived_dir, key, tree=self.home.ontologies)
        index = self._index(data, False) if data is not None else None
        if data is not None and index is not None:
            return View(signature, data, index, slot, rebuilt=False, lock=lock)
        if data is None and self._rebuild is not None:
            ran = self._rebuild()
            data = (
                load_snapshot(self.home.derived_dir, key, tree=self.home.ontologies)
                if ran
                else None
            )
            index = self._index(data, False) if data is not None else None
            if data is not None and index is not None:
                return View(signature, data, index, slot, rebuilt=True, lock=lock)
            if ran and old is not None:
                # The child saw another tree, or one being changed (nothing saved): keep
                # serving `old` and try again later rather than build here.
                raise _TreeMoved
            # The child could not run (or this is the first view): build here.
        # No snapshot, or one whose stored index does not fit: rebuild from the tree (the
        # body text an index is made of is not in the snapshot).
        from .loader import build_catalog  # pyoxigraph: only when building

        if reporter is not None and lock.packages:
            skills = sum(len(p.skills) for p in lock.packages.values())
            vectors = " and its vectors (encoder model)" if encoder is not None else ""
            reporter.stage(f"building the search index{vectors} for {plural(skills, 'skill')}")
        encode = None
        stored_ok = None
        if encoder is not None:
            encode = VectorCache(self.home.derived_dir, signature.model, encoder.encode).encode
            # the encoder's model id: the configured one, else the one install placed
            placed = lock.embeddings.model if lock.embeddings else None
            own = self.config.embeddings.model or placed

            def stored_ok(model: str | None, enc: Encoder = encoder) -> bool:
                return enc.reads_published_vectors(model, own)
        data = build_catalog(self.home, lock, verification, encode=encode, stored_ok=stored_ok)
        index = self._index(data, True)
        if index is None:
            raise AssertionError("an index built from the tree must not be None")
        if (data.records or data.problems) and self._settled(signature):
            save_snapshot(self.home.derived_dir, key, data)  # an empty home stays untouched
        return View(signature, data, index, slot, rebuilt=True, lock=lock)

    def _settled(self, signature: Signature) -> bool:
        """Whether what was just built is the tree of `signature` and may be saved under its
        key: no install transaction is under way (its journal exists from before the first
        folder moves until after the lock is written) and the lock is the one the signature
        saw. A build that raced a transaction (a package folder moved away while the old
        lock still listed it) is served until the lock changes, never saved: saved, it would
        be read back for the same lock bytes with a package missing."""
        if _stat(self.lockfile) != signature.lock:
            return False
        try:
            return not any(self.home.staging_dir.glob("*/journal.json"))
        except OSError:
            return False
