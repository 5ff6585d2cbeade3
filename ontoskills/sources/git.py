"""A registry that is a git repository (the public OntoStore, a fork, a local repo).

We keep a bare clone per remote under cache.git_dir and read every file from the object
database at one resolved commit, never from a checkout: a checkout would let core.autocrlf
or filters rewrite bytes, and could materialise symlinks. Network remotes are fetched
shallow (depth 1); local ones in full (libgit2 cannot fetch shallow from a local path).
A `pin` (the commit recorded in the lock) is read exactly, fetched by id if missing.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from pathlib import Path

import pygit2
from filelock import FileLock
from pygit2.enums import FileMode

from ..errors import (
    LimitExceededError,
    NetworkError,
    NotFoundError,
    OntoskillsError,
    UnsafePathError,
    UsageError,
)
from ..fsutil import CHUNK, make_dirs, remove_tree
from ..registries import RegistryConfig, RegistryKind
from ..safety import check_relpath
from ._auth import check_transport
from ._gitremote import (
    TokenCallbacks,
    git_error,
    is_network_remote,
    local_remote_path,
    remote_host,
    split_git_url,
)
from .base import BaseSource, RemoteFile, SourceOptions, TreeEntry

_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REF_CHARS = re.compile(r"[A-Za-z0-9._/+-]{1,200}")  # what we accept after '#' in a URL
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def ref_problem(name: str) -> str | None:
    """Why `name` is not a valid git ref name (git check-ref-format rules), or None."""
    if not name or name == "@":
        return "empty or '@'"
    if m := _REF_FORBIDDEN.search(name):
        return f"contains {m.group()!r}"
    if name.startswith(("/", "-")) or name.endswith(("/", ".")):
        return "starts with '/' or '-', or ends with '/' or '.'"
    for component in name.split("/"):
        if component.startswith("."):
            return f"component {component!r} starts with '.'"
        if component.endswith(".lock"):
            return f"component {component!r} ends with '.lock'"
    return None


def check_ref_component(value: str, what: str) -> str:
    """A value that becomes one component of a git ref (a version in a publish branch):
    refused by name (exit 2) before any git call instead of a libgit2 error after one."""
    problem = "contains '/'" if "/" in value else ref_problem(value)
    if problem is not None:
        raise UsageError(
            f"{what} {value[:80]!r} cannot be part of a git ref: {problem}",
            hint="use letters, digits, '.', '-' and '+' (e.g. 1.2.0 or 2.0.0-rc.1)",
        )
    return value


_FILE_MODES = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)


def _resolved_ref(ref: str | None) -> str:
    """Where the last fetch of the wanted branch/tag is remembered (for --offline)."""
    return "refs/ontoskills/resolved/" + (f"ref/{ref}" if ref else "HEAD")


class GitSource(BaseSource):
    kind = RegistryKind.GIT
    vcs = True

    def __init__(
        self, config: RegistryConfig, options: SourceOptions, *, pin: str | None = None
    ) -> None:
        super().__init__(config, options)
        url, ref = split_git_url(config.url)
        if ref is not None and (not _REF_CHARS.fullmatch(ref) or ref_problem(ref) is not None):
            raise UsageError(
                f"registry {config.name}: invalid git ref {ref[:80]!r} after '#' "
                f"({ref_problem(ref) or 'only letters, digits and . _ / + - are allowed'})",
                hint="name a branch or tag after '#' (e.g. #main or #v1.2.0)",
            )
        if pin is not None and not _HEX40.match(pin):
            raise UsageError(f"registry {config.name}: pinned commit {pin!r} is not a sha1")
        self.network = is_network_remote(url)
        if self.network:
            if url.startswith(("http://", "https://")):
                check_transport(url, options.allow_insecure_http, f"registry {config.name}")
            self.remote_url = url
        else:
            self.remote_url = str(local_remote_path(url))
        self.ref = ref
        self.pin = pin
        self.is_local = not self.network
        digest = hashlib.sha256(self.remote_url.encode()).hexdigest()[:16]
        slug = re.sub(r"[^a-z0-9]+", "-", self.remote_url.lower().rsplit("/", 1)[-1])[:40]
        self.clone_dir = options.cache.git_dir / f"{slug.strip('-') or 'repo'}-{digest}"
        self.env = options.env or None
        self._lock = threading.Lock()
        self._repo: pygit2.Repository | None = None
        self._commit: pygit2.Commit | None = None

    # clone + resolve ----------------------------------------------------------------
    def _open_repo(self) -> pygit2.Repository:
        if (self.clone_dir / "HEAD").is_file():
            return pygit2.Repository(str(self.clone_dir))
        if self.options.offline:
            raise self._offline_miss(self.pin[:12] if self.pin else self.ref or "HEAD")
        self.options.cache.ensure_root()
        make_dirs(self.clone_dir.parent)
        if not self.network:
            # A local clone hard-links the object files: ~50x faster than packing a fetch.
            tmp = self.clone_dir.with_name(self.clone_dir.name + ".tmp")
            remove_tree(tmp)
            try:
                pygit2.clone_repository(self.remote_url, str(tmp), bare=True)
            except (pygit2.GitError, ValueError, KeyError) as exc:
                remove_tree(tmp)
                raise git_error(exc, self.remote_url, "clone", self.config.name) from None
            tmp.rename(self.clone_dir)
            return pygit2.Repository(str(self.clone_dir))
        return pygit2.init_repository(str(self.clone_dir), bare=True)

    def _arm_timeouts(self) -> None:
        """libgit2 waits on a stalled server without end by default: bound each socket wait
        by the read timeout cut to the command's deadline, and start nothing once it is spent."""
        if not self.network:
            return
        deadline = self.options.deadline
        remaining = deadline.remaining() if deadline is not None else math.inf
        if deadline is not None and remaining <= 0:
            raise NetworkError(
                f"network deadline of {deadline.seconds:g} s reached before fetching from "
                f"{self._where()}",
                hint="retry later, or raise ONTOSKILLS_NETWORK_DEADLINE or "
                "`[network] deadline` (seconds)",
            )
        wait = min(self.options.timeout, remaining)
        pygit2.settings.server_timeout = max(1, int(wait * 1000))
        pygit2.settings.server_connect_timeout = max(1, int(min(wait, 15) * 1000))

    def _callbacks(self) -> TokenCallbacks:
        return TokenCallbacks(self.remote_url, self.env, origins=self.options.token_origins)

    def _fetch(self, repo: pygit2.Repository, refspecs: list[str]) -> None:
        self._arm_timeouts()
        remote = repo.remotes.create_anonymous(self.remote_url)
        try:
            remote.fetch(
                refspecs,
                callbacks=self._callbacks(),
                depth=1 if self.network else 0,
            )
        except (pygit2.GitError, OntoskillsError, KeyError, ValueError) as exc:
            raise git_error(exc, self.remote_url, registry=self.config.name) from None

    def _remote_ref(self, repo: pygit2.Repository) -> str:
        """The remote ref to fetch for self.ref (or the remote's HEAD)."""
        self._arm_timeouts()
        remote = repo.remotes.create_anonymous(self.remote_url)
        try:
            heads = remote.list_heads(callbacks=self._callbacks())
        except (pygit2.GitError, OntoskillsError) as exc:
            raise git_error(exc, self.remote_url, "ls-remote", self.config.name) from None
        names = {h.name: h for h in heads}
        if self.ref is None:
            head = names.get("HEAD")
            if head is None:
                raise NotFoundError(f"git repository {self._where()} has no HEAD (empty?)")
            return head.symref_target or "HEAD"
        for name in (f"refs/heads/{self.ref}", f"refs/tags/{self.ref}", self.ref):
            if name in names:
                return name
        raise NotFoundError(
            f"git ref {self.ref!r} not found in {self._where()}",
            hint="check the branch or tag after '#' in the registry URL",
        )

    def _where(self) -> str:
        return remote_host(self.remote_url) if self.network else self.remote_url

    def _lookup_commit(self, repo: pygit2.Repository, oid: str) -> pygit2.Commit | None:
        try:
            obj = repo.get(oid)
        except (ValueError, pygit2.GitError):
            return None
        if obj is None:
            return None
        try:
            return obj.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError, pygit2.InvalidSpecError):
            return None

    def _resolve(self, repo: pygit2.Repository) -> pygit2.Commit:
        if self.pin is not None:
            commit = self._lookup_commit(repo, self.pin)
            if commit is None and not self.options.offline:
                if self.network:  # servers allow fetching a reachable commit by id
                    try:
                        self._fetch(repo, [f"+{self.pin}:refs/ontoskills/pins/{self.pin}"])
                    except (NetworkError, NotFoundError):  # server refuses fetch-by-id
                        self._fetch(repo, [f"+{self._remote_ref(repo)}:refs/ontoskills/tip"])
                else:
                    self._fetch(
                        repo,
                        [
                            "+refs/heads/*:refs/ontoskills/heads/*",
                            "+refs/tags/*:refs/ontoskills/tags/*",
                        ],
                    )
                commit = self._lookup_commit(repo, self.pin)
            if commit is None:
                if self.options.offline:
                    raise self._offline_miss(f"commit {self.pin[:12]}")
                raise NotFoundError(
                    f"commit {self.pin[:12]} is not in git registry {self.config.name} "
                    f"({self._where()})",
                    hint="the lock pins a commit the registry no longer has; "
                    "run `ontoskills update` to re-resolve",
                )
            return commit
        local_ref = _resolved_ref(self.ref)
        if not self.options.offline:
            self._fetch(repo, [f"+{self._remote_ref(repo)}:{local_ref}"])
        try:
            return repo.references[local_ref].peel(pygit2.Commit)
        except (KeyError, pygit2.GitError):
            if self.options.offline:
                raise self._offline_miss(self.ref or "HEAD") from None
            raise NotFoundError(
                f"{self.ref or 'HEAD'} of {self._where()} is not a commit"
            ) from None

    def _offline_miss(self, what: str) -> NetworkError:
        return NetworkError(
            f"offline: {what} of git registry {self.config.name} is not in the cache",
            hint="run the same command once without --offline to fill the cache",
        )

    def _ensure(self) -> pygit2.Commit:
        with self._lock:
            if self._commit is None:
                make_dirs(self.clone_dir.parent)
                # one fetch at a time per clone, across processes sharing the cache
                with FileLock(str(self.clone_dir) + ".lock"):
                    repo = self._open_repo()
                    self._commit = self._resolve(repo)
                    self._repo = repo
            return self._commit

    @property
    def commit(self) -> str:
        return str(self._ensure().id)

    # reading from the object database ------------------------------------------------
    def _walk_to(self, relpath: str) -> pygit2.Object:
        check_relpath(relpath, "registry path")
        node: pygit2.Object = self._ensure().tree
        for i, segment in enumerate(relpath.split("/")):
            if not isinstance(node, pygit2.Tree) or segment not in node:
                raise NotFoundError(
                    f"{self.config.name}: {relpath} not found at commit {self.commit[:12]}"
                )
            entry = node[segment]
            self._check_mode(entry.filemode, "/".join(relpath.split("/")[: i + 1]))
            node = entry
        return node

    def _check_mode(self, mode: int, path: str) -> None:
        if mode == FileMode.LINK:
            raise UnsafePathError(f"{self.config.name}: {path} is a symlink in the git tree")
        if mode == FileMode.COMMIT:
            raise UnsafePathError(f"{self.config.name}: {path} is a git submodule")

    def _blob(self, relpath: str, max_bytes: int) -> pygit2.Blob:
        obj = self._walk_to(relpath)
        if not isinstance(obj, pygit2.Blob):
            raise NotFoundError(f"{self.config.name}: {relpath} is a folder, not a file")
        if obj.size > max_bytes:
            raise LimitExceededError(f"{self.config.name}: {relpath} is larger than {max_bytes}")
        return obj

    def read(self, relpath: str, *, max_bytes: int) -> bytes:
        return self._blob(relpath, max_bytes).data

    def fetch_to(self, relpath: str, dest: Path, *, max_bytes: int) -> tuple[str, int]:
        blob = self._blob(relpath, max_bytes)
        view = memoryview(blob)  # libgit2 already holds the inflated object: no extra copy
        h = hashlib.sha256()
        with open(dest, "wb") as out:
            for start in range(0, len(view), CHUNK):
                chunk = view[start : start + CHUNK]
                h.update(chunk)
                out.write(chunk)
        return h.hexdigest(), len(view)

    def list_package(self, package_root: str) -> list[RemoteFile] | None:
        tree = self._walk_to(package_root) if package_root else self._ensure().tree
        if not isinstance(tree, pygit2.Tree):
            raise NotFoundError(f"{self.config.name}: {package_root} is not a folder")
        odb = self._repo.odb if self._repo is not None else None
        assert odb is not None  # _walk_to/_ensure opened the repository
        out: list[RemoteFile] = []
        stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
        while stack:
            prefix, node = stack.pop()
            for entry in node:
                rel = f"{prefix}{entry.name}"
                self._check_mode(entry.filemode, f"{package_root}/{rel}")
                if isinstance(entry, pygit2.Tree):
                    stack.append((rel + "/", entry))
                elif entry.filemode in _FILE_MODES and isinstance(entry, pygit2.Blob):
                    size = odb.read_header(entry.id)[1]  # no inflating the whole blob twice
                    out.append(RemoteFile(rel, size, entry.filemode == FileMode.BLOB_EXECUTABLE))
                else:
                    raise UnsafePathError(f"{self.config.name}: {package_root}/{rel} is not a file")
        return sorted(out, key=lambda f: f.path)


    def tree_entries(self, skip: frozenset[str], max_entries: int) -> list[TreeEntry]:
        """Every entry of the commit's tree (the skills kind scans a whole repository):
        symlinks and submodules reported as such, never followed; folders named in `skip`
        not entered; at most `max_entries`."""
        tree = self._ensure().tree
        assert self._repo is not None  # _ensure opened it
        odb = self._repo.odb
        out: list[TreeEntry] = []
        stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
        while stack:
            prefix, node = stack.pop()
            for entry in node:
                rel = f"{prefix}{entry.name}"
                if entry.filemode == FileMode.LINK:
                    out.append(TreeEntry(rel, "link"))
                elif isinstance(entry, pygit2.Tree):
                    if entry.name not in skip:
                        stack.append((rel + "/", entry))
                elif entry.filemode in _FILE_MODES and isinstance(entry, pygit2.Blob):
                    size = odb.read_header(entry.id)[1]
                    executable = entry.filemode == FileMode.BLOB_EXECUTABLE
                    out.append(TreeEntry(rel, "file", size, executable))
                else:
                    out.append(TreeEntry(rel, "other"))
                if len(out) > max_entries:
                    raise LimitExceededError(
                        f"{self.config.name}: more than {max_entries} entries in the tree"
                    )
        return sorted(out, key=lambda e: e.path)

    # close(): nothing; the resolved commit stays (never switch revisions mid-session)
