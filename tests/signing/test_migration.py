"""An existing unsigned registry becomes signed (`registry init --signed` on it signs what is
there), and its users move over: those who installed unsigned keep working and are now
verified; the ones who asked for signatures get them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import init_registry
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.publish.conftest import AUTHOR, make_package, tree_state
from tests.signing.conftest import KINDS


@pytest.fixture
def unsigned(tmp_path: Path, git_author: None) -> Path:
    """A git registry with two packages published before signing existed."""
    reg = tmp_path / "registry"
    init_registry(reg, git=True, author=AUTHOR)
    for pid in ("acme/tools", "acme/extra"):
        publish(
            make_package(tmp_path / "work", pid),
            PublishOptions(registry=str(reg), author_name=AUTHOR.name, author_email=AUTHOR.email),
        )
    return reg


@contextlib.contextmanager
def serve(reg: Path, kind: str) -> Iterator[list[str]]:
    """`registry add` arguments for the registry, by kind (HTTP: loopback)."""
    if kind == "http":
        with FaultServer(reg) as srv:
            yield [srv.url]
    else:
        yield [str(reg), *(["--kind", "folder"] if kind == "folder" else [])]


def _head(reg: Path) -> pygit2.Commit:
    return pygit2.Repository(str(reg)).head.peel(pygit2.Commit)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unsigned_registry_is_signed_in_place_and_its_users_follow(
    cli: CliRunner, env: dict[str, str], unsigned: Path, tmp_path: Path, kind: str
) -> None:
    home = Path(env["ONTOSKILLS_HOME"])
    with serve(unsigned, kind) as add:
        cli("registry", "add", "corp", *add, check=True)
        cli("install", "acme/tools", check=True)
        assert "signed = true" not in (home / "ontoskills.lock").read_text()
        before = _head(unsigned)
        keys = tmp_path / "keys"

        proc = cli(
            "--json", "registry", "init", "--signed", str(unsigned), "--keys", str(keys),
            check=True,
        )  # fmt: skip
        doc = json.loads(proc.stdout)
        assert doc["existing"] is True and doc["commit"], doc
        # One commit on top that adds metadata/ and changes nothing else.
        after = _head(unsigned)
        assert after.parents[0].id == before.id
        diff = pygit2.Repository(str(unsigned)).diff(before.tree, after.tree)
        assert {d.delta.new_file.path.split("/")[0] for d in diff} == {"metadata"}
        verify = json.loads(cli("--json", "registry", "verify", str(unsigned), check=True).stdout)
        # index.json, and per package its package.json and every file it lists
        manifests = [json.loads(p.read_text()) for p in unsigned.glob("packages/*/*/package.json")]
        expected = 1 + sum(1 + len(m["files"]) for m in manifests)
        assert verify["ok"] and verify["signed"]["targets"] == expected, verify

        # The user who installed it unsigned: now verified (trusted on first use, said so),
        # and the lock records it; a later strip of the metadata would be a downgrade.
        proc = cli("install", "acme/extra", check=True)
        assert "trusting its root v1 on first use" in proc.stderr
        assert "signed = true" in (home / "ontoskills.lock").read_text()
        # A user who requires signatures and pins the root gets them.
        cli("registry", "add", "corp", *add, "--root", str(unsigned / "metadata/root.json"))
        cli("--require-signed", "install", "acme/tools", check=True)


def test_a_registry_with_uncommitted_changes_is_not_signed(
    cli: CliRunner, unsigned: Path, tmp_path: Path
) -> None:
    manifest = unsigned / "packages/acme/tools/package.json"
    manifest.write_text(manifest.read_text() + " ")
    before = tree_state(unsigned)
    proc = cli("registry", "init", "--signed", str(unsigned), "--keys", str(tmp_path / "k"))
    assert proc.returncode == 2, proc.stderr
    assert "work tree differs from HEAD" in proc.stderr and "package.json" in proc.stderr
    assert tree_state(unsigned) == before and not (tmp_path / "k").exists()


def test_a_file_that_does_not_match_its_manifest_is_never_signed(
    cli: CliRunner, unsigned: Path, tmp_path: Path
) -> None:
    ttl = next((unsigned / "packages/acme/extra").rglob("*.ttl"))
    ttl.write_bytes(ttl.read_bytes() + b"# injected\n")
    before = tree_state(unsigned)
    keys = tmp_path / "k"
    proc = cli("registry", "init", "--signed", str(unsigned), "--keys", str(keys), "--no-git")
    assert proc.returncode == 4 and "does not match its manifest" in proc.stderr, proc.stderr
    assert tree_state(unsigned) == before and not keys.exists()


def test_a_signed_registry_is_not_initialised_twice(
    cli: CliRunner, unsigned: Path, tmp_path: Path
) -> None:
    cli("registry", "init", "--signed", str(unsigned), "--keys", str(tmp_path / "k1"), check=True)
    before = tree_state(unsigned)
    proc = cli("registry", "init", "--signed", str(unsigned), "--keys", str(tmp_path / "k2"))
    assert proc.returncode == 2 and "already signed" in proc.stderr, proc.stderr
    assert tree_state(unsigned) == before and not (tmp_path / "k2").exists()
    # Without --signed an existing registry is still refused, pointing at --signed.
    plain = cli("registry", "init", str(unsigned))
    assert plain.returncode == 2 and "exists and is not empty" in plain.stderr
    assert "registry init --signed" in plain.stderr
