"""Bugs the hardening suites found, pinned one by one so they cannot come back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoskills.errors import UnsafePathError
from ontoskills.manifest import parse_manifest
from ontoskills.safety import check_relpath, safe_join


@pytest.mark.parametrize("path", ["a\ud800.ttl", "dir/\udfff", "\ud83d/x.ttl"])
def test_lone_surrogate_path_is_unsafe_not_a_crash(path: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        check_relpath(path)
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, path)


def test_lone_surrogate_in_manifest_json_is_exit_4() -> None:
    # "\ud800" is valid JSON text but decodes to a string no filesystem can represent.
    raw = json.dumps(
        {"package_id": "a/b", "version": "1", "modules": ["x\ud800.ttl"], "skills": []}
    )
    assert "\\ud800" in raw
    with pytest.raises(UnsafePathError) as info:
        parse_manifest(raw.encode(), source="package.json")
    assert info.value.exit_code == 4


@pytest.mark.parametrize(
    "body", ["timeout = 'soon'", "parallel = 0", "retries = -1", "timeout = true"]
)
def test_bad_network_config_is_a_config_error_exit_2(body: str, tmp_path: Path) -> None:
    from ontoskills.config import load_config
    from ontoskills.errors import ConfigError

    (tmp_path / "config.toml").write_text(f"[network]\n{body}\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "config.toml")
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    "url,expected",
    [
        ("https://reg.example/packages/x", True),
        ("https://REG.example:443/x", True),
        ("https://reg.example:8443/x", False),  # another port: another server
        ("http://reg.example/x", False),  # a downgrade would send the token in clear text
        ("https://other.example/x", False),
    ],
)
def test_token_only_for_the_registry_origin(url: str, expected: bool) -> None:
    from ontoskills.sources._auth import token_for, token_origins

    configured = token_origins(["https://reg.example/"], {"_": ""})
    token = token_for(url, "https://reg.example/", {"ONTOSKILLS_TOKEN": "t"}, configured)
    assert (token is not None) == expected


@pytest.mark.parametrize("value", ["false", "1", '"a/b"', "{ x = 1 }"])
def test_lock_requested_of_wrong_type_is_exit_3(value: str, tmp_path: Path) -> None:
    from ontoskills import lockfile
    from ontoskills.errors import LockFormatError

    text = f'lock_version = 1\n\n[packages."a/b"]\ntrust_tier = "official"\nrequested = {value}\n'
    with pytest.raises(LockFormatError) as info:
        lockfile.parse(text, tmp_path / "ontoskills.lock")
    assert info.value.exit_code == 3


def test_recover_removes_temp_files_of_an_interrupted_atomic_write(tmp_path: Path) -> None:
    """A SIGKILL inside atomic_write_bytes left `.index.enabled.ttl.XXXX.tmp` in the tree
    forever (found by benchmarks/kill_loop.py)."""
    from ontoskills.install.transaction import recover
    from ontoskills.paths import Home

    home = Home(tmp_path / "home")
    home.system_dir.mkdir(parents=True)
    stale = home.system_dir / ".index.enabled.ttl.ab12cd.tmp"
    stale.write_text("half")
    other = home.system_dir / ".user-notes.tmp"  # not ours: left alone
    other.write_text("keep")
    recover(home)
    assert not stale.exists()
    assert other.exists()


def test_unknown_tilde_user_in_a_registry_url_is_exit_2(tmp_path: Path) -> None:
    """`url = "~0"` made Path.expanduser() raise RuntimeError (found by the slow fuzz run)."""
    from ontoskills.config import load_config
    from ontoskills.errors import UsageError

    (tmp_path / "config.toml").write_text('[registries.x]\nurl = "~no-such-user-0/reg"\n')
    with pytest.raises(UsageError) as info:
        load_config(tmp_path / "config.toml")
    assert info.value.exit_code == 2


def test_nul_in_a_locked_registry_url_is_exit_3(tmp_path: Path) -> None:
    """`url = "\\u0000"` raised ValueError from os.path (found by the 5,000-example fuzz run)."""
    from ontoskills import lockfile
    from ontoskills.errors import LockFormatError

    text = 'lock_version = 1\n\n[registries.r]\nurl = "a\\u0000b"\n'
    with pytest.raises(LockFormatError):
        lockfile.parse(text, tmp_path / "ontoskills.lock")
