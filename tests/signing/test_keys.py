"""Maintainers' private keys: 0600 files in a 0700 folder that are refused when others can
read them (as ssh does), never printed, never inside the registry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.publish.conftest import make_package, tree_state
from tests.signing.conftest import Signed

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def _key_material(keys: Path) -> list[str]:
    """Every line of every private key file that is key material (base64 body lines)."""
    lines = []
    for pem in keys.rglob("*.pem"):
        lines += [ln for ln in pem.read_text().splitlines() if ln and not ln.startswith("-----")]
    assert lines
    return lines


@posix_only
def test_init_writes_0600_keys_in_a_0700_folder_and_never_prints_them(
    cli: CliRunner, tmp_path: Path, git_author: None
) -> None:
    reg, keys = tmp_path / "reg", tmp_path / "keys"
    procs = [cli("registry", "init", "--signed", str(reg), "--keys", str(keys), check=True)]
    assert (keys.stat().st_mode & 0o777) == 0o700
    pems = sorted(keys.glob("*.pem"))
    assert {p.name.split("-")[0] for p in pems} >= {"root", "targets", "snapshot", "timestamp"}
    assert all((p.stat().st_mode & 0o777) == 0o600 for p in pems)
    assert not [p for p in reg.rglob("*") if p.suffix == ".pem" or b"PRIVATE KEY" in _bytes(p)]
    for args in (
        ("--json", "registry", "keys", "list", str(reg)),
        ("registry", "keys", "rotate", "timestamp", str(reg), "--keys", str(keys)),
        ("--json", "registry", "sign", "--timestamp", str(reg), "--keys", str(keys)),
    ):
        procs.append(cli(*args, check=True))
    material = _key_material(keys)
    for proc in procs:
        out = proc.stdout + proc.stderr
        assert "PRIVATE KEY" not in out
        assert not [ln for ln in material if ln in out]


def _bytes(p: Path) -> bytes:
    return p.read_bytes() if p.is_file() else b""


@posix_only
@pytest.mark.parametrize(
    ("what", "mode"), [("file", 0o644), ("file", 0o640), ("file", 0o604), ("folder", 0o755)]
)
def test_keys_others_can_read_are_refused_and_nothing_is_signed(
    cli: CliRunner, signed: Signed, tmp_path: Path, what: str, mode: int
) -> None:
    target = signed.keys if what == "folder" else next(signed.keys.glob("timestamp-*.pem"))
    target.chmod(mode)
    before = tree_state(signed.root)
    pkg = make_package(tmp_path, "acme/extra", "1.0.0")
    for args in (
        ("registry", "sign", "--timestamp", str(signed.root), "--keys", str(signed.keys)),
        ("publish", str(pkg), "--registry", str(signed.root), "--keys", str(signed.keys)),
    ):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert "accessible to other users" in proc.stderr and str(target) in proc.stderr
        assert f"chmod {0o700 if what == 'folder' else 0o600:o}" in proc.stderr
    assert tree_state(signed.root) == before
    target.chmod(0o700 if what == "folder" else 0o600)
    cli(*args, check=True)  # the same publish, once the key is private again


@posix_only
def test_an_existing_keys_folder_others_can_read_is_not_used_for_new_keys(
    cli: CliRunner, tmp_path: Path
) -> None:
    keys = tmp_path / "shared"
    keys.mkdir(mode=0o755)
    keys.chmod(0o755)
    reg = tmp_path / "reg"
    proc = cli("registry", "init", "--signed", str(reg), "--keys", str(keys), "--no-git")
    assert proc.returncode == 2 and "accessible to other users" in proc.stderr, proc.stderr
    assert list(keys.iterdir()) == []


@pytest.mark.parametrize("how", ["env", "symlink"])
def test_keys_inside_the_registry_are_refused_however_named(
    cli: CliRunner, tmp_path: Path, how: str
) -> None:
    reg = tmp_path / "reg"
    inside = reg / "secrets"
    if how == "env":
        proc = cli(
            "registry", "init", "--signed", str(reg), "--no-git",
            extra_env={"ONTOSKILLS_KEYS_DIR": str(inside)},
        )  # fmt: skip
    else:
        reg.mkdir()
        link = tmp_path / "keys-link"
        link.symlink_to(reg, target_is_directory=True)
        proc = cli("registry", "init", "--signed", str(reg), "--keys", str(link / "k"), "--no-git")
    assert proc.returncode == 2 and "inside the registry" in proc.stderr, proc.stderr
    assert not list(reg.rglob("*.pem"))
