"""A fake Hugging Face hub on loopback that real huggingface_hub code downloads from.

It speaks the protocol huggingface_hub 2.x uses in `hf_hub_download` (file_download.py):
`HEAD {endpoint}/{repo}/resolve/{revision}/{path}` answers with `X-Repo-Commit`, and for LFS
files a redirect to a CDN host with `X-Linked-Etag` (the content sha256) and `X-Linked-Size`;
the client then `GET`s the `Location`. Errors carry `X-Error-Code` (RepoNotFound,
RevisionNotFound, EntryNotFound) like the real hub. The CDN is the same server reached under
another host name (localhost vs 127.0.0.1), so the client treats it as off-hub.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


@dataclass
class FakeHub:
    server: HTTPServer
    repo: str = "sentence-transformers/all-MiniLM-L6-v2"
    commit: str = COMMIT
    files: dict[str, bytes] = field(default_factory=dict)  # repo path -> content
    log: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    wrong_etag: set[str] = field(default_factory=set)  # announce a sha256 the body won't have
    truncate: set[str] = field(default_factory=set)  # send half the body
    status: int | None = None  # force every resolve to this status (401, 500...)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def gets(self) -> list[str]:
        """File downloads (huggingface_hub also asks /api/agent-harnesses once a day)."""
        return [p for m, p in self.log if m == "GET" and p.startswith("/cdn/")]

    def add_folder(self, folder: Path, mapping: dict[str, str]) -> FakeHub:
        """mapping: repo path -> file name in folder."""
        for repo_path, name in mapping.items():
            self.files[repo_path] = (folder / name).read_bytes()
        return self

    def install(self) -> FakeHub:
        self.server.expect_request(re.compile("^/.*")).respond_with_handler(self._handle)
        return self

    def _err(self, code: str, status: int = 404) -> Response:
        return Response("", status=status, headers={"X-Error-Code": code})

    def _handle(self, request: Request) -> Response:
        self.log.append((request.method, request.path))
        if request.path.startswith("/cdn/"):
            return self._cdn(request)
        m = _RESOLVE.match(request.path)
        if not m:
            return Response("", status=404)
        if self.status is not None:
            return Response("", status=self.status)
        if m["repo"] != self.repo:
            return self._err("RepoNotFound")
        if m["rev"] not in (self.commit, "main"):
            return self._err("RevisionNotFound")
        path = m["path"]
        if path not in self.files:
            resp = self._err("EntryNotFound")
            resp.headers["X-Repo-Commit"] = self.commit
            return resp
        data = self.files[path]
        sha = hashlib.sha256(data).hexdigest()
        etag = hashlib.sha256(data + b"!").hexdigest() if path in self.wrong_etag else sha
        return Response(
            "",
            status=302,
            headers={
                "Location": f"http://localhost:{self.server.port}/cdn/{sha}?path={path}",
                "X-Repo-Commit": self.commit,
                "X-Linked-Etag": f'"{etag}"',
                "X-Linked-Size": str(len(data)),
                "ETag": '"0000000000000000000000000000000000000000"',  # the pointer's git oid
            },
        )

    def _cdn(self, request: Request) -> Response:
        path = request.args.get("path", "")
        data = self.files.get(path)
        if data is None:
            return Response("", status=404)
        if path in self.truncate:
            data = data[: len(data) // 2]
        return Response(data, status=200, headers={"Content-Type": "application/octet-stream"})
