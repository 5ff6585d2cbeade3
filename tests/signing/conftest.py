"""Signed registries for tests: a maintainer side (in-process: init, publish, forge) and a
client side (the real CLI in a subprocess) over folder, loopback HTTP and git.

`Signed` is a git checkout with TUF metadata and its keys folder; every change a test makes
(a publish, an attack) is committed, so the git client sees it at HEAD while the folder and
HTTP clients read the same work tree.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pygit2
import pytest

from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import SignedInit, init_registry
from ontoskills.signing import keys as keymod
from ontoskills.signing.repo import Policy, Repo, write_files
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.publish.conftest import AUTHOR, GIT_ENV, make_package

KINDS = ("folder", "git", "http")


@dataclass
class Signed:
    root: Path  # the registry (a git checkout)
    keys: Path  # its private keys (outside it)
    work: Path  # scratch space for packages

    def publish(self, package_id: str, version: str = "1.0.0") -> None:
        pkg = make_package(self.work, package_id, version)
        publish(
            pkg,
            PublishOptions(
                registry=str(self.root),
                keys_dir=self.keys,
                author_name=AUTHOR.name,
                author_email=AUTHOR.email,
            ),
        )

    def repo(self, *, now: datetime | None = None, roles: tuple[str, ...] = keymod.ROLES) -> Repo:
        return Repo(self.root, keymod.load(self.keys, roles), now=now)

    def write(self, files: dict[str, bytes], message: str = "change") -> None:
        write_files(self.root, files)
        self.commit(message)

    def metadata(self) -> dict[str, bytes]:
        return {
            p.relative_to(self.root).as_posix(): p.read_bytes()
            for p in sorted((self.root / "metadata").iterdir())
        }

    def put(self, rel: str, data: bytes, message: str = "change") -> None:
        (self.root / rel).write_bytes(data)
        self.commit(message)

    def commit(self, message: str) -> None:
        """Commit the whole work tree as it is (an attacker's push, or a sync script)."""
        repo = pygit2.Repository(str(self.root))
        index = repo.index
        index.add_all()
        index.write()
        tree = index.write_tree()
        if tree == repo.head.peel(pygit2.Commit).tree.id:
            return
        sig = pygit2.Signature(AUTHOR.name, AUTHOR.email)
        repo.create_commit("HEAD", sig, sig, message, tree, [repo.head.target])


def make_signed(base: Path, *, policy: Policy | None = None) -> Signed:
    root, keys = base / "registry", base / "keys"
    init_registry(root, git=True, author=AUTHOR, signed=SignedInit(keys, policy or Policy()))
    return Signed(root, keys, base / "work")


def past(days: float) -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=days)


@dataclass
class Client:
    """The user's side: the real CLI, a configured registry `corp` trusting the root."""

    cli: CliRunner
    home: Path
    kind: str
    url: str
    root_file: Path
    extra: list[str] = field(default_factory=list)

    def run(self, *args: str, check: bool = False) -> object:
        return self.cli(*args, check=check)

    def add(self, url: str | None = None) -> None:
        kind = ["--kind", "folder"] if self.kind == "folder" else []
        self.cli(
            "registry",
            "add",
            "corp",
            url or self.url,
            "--root",
            str(self.root_file),
            *kind,
            check=True,
        )

    def state(self) -> tuple[dict[str, bytes], bytes]:
        """Every installed file and the lock: what an attack must leave byte for byte."""
        tree = {
            p.relative_to(self.home).as_posix(): p.read_bytes()
            for p in sorted((self.home / "ontologies").rglob("*"))
            if p.is_file()
        }
        return tree, (self.home / "ontoskills.lock").read_bytes()


@pytest.fixture
def git_author(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


@pytest.fixture
def signed(tmp_path: Path, git_author: None) -> Signed:
    reg = make_signed(tmp_path / "maintainer")
    reg.publish("acme/tools")
    return reg


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def served(signed: Signed, kind: str) -> Iterator[str]:
    """The registry's URL for the client, by kind (HTTP serves the work tree on loopback)."""
    if kind == "http":
        with FaultServer(signed.root) as srv:
            yield srv.url
    else:
        yield str(signed.root)


@pytest.fixture
def client(
    cli: CliRunner, env: dict[str, str], signed: Signed, kind: str, served: str, tmp_path: Path
) -> Client:
    """A client that trusts the registry's root v1 and installed acme/tools from it."""
    root_file = tmp_path / "trusted-root.json"
    shutil.copyfile(signed.root / "metadata" / "root.json", root_file)
    return installed_client(cli, env, kind, served, root_file)


def installed_client(
    cli: CliRunner, env: dict[str, str], kind: str, url: str, root_file: Path
) -> Client:
    """A client that added the registry at `url` trusting `root_file`, and installed acme/tools."""
    c = Client(cli, Path(env["ONTOSKILLS_HOME"]), kind, url, root_file)
    c.add()
    c.cli("install", "acme/tools", check=True)
    return c
