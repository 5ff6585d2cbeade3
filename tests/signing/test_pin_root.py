"""`signing.trust.pin_root`: what `registry add --root / --trust-on-first-use` trusts, as a
domain call (issue 23: it lived in commands/registry.py and printed from there). It returns
what it pinned and writes only its copy beside config.toml; the verb prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from tuf.api.metadata import Metadata, Root

from ontoskills.errors import SignatureError, UsageError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig, RegistryKind
from ontoskills.signing.trust import fingerprints, pin_root
from ontoskills.sources import SourceOptions
from tests.helpers.registry import build_registry, sample_packages
from tests.signing.conftest import Signed


def options(tmp_path: Path) -> SourceOptions:
    return SourceOptions(cache=Cache(tmp_path / "cache"))


def test_first_use_pins_the_current_root(
    signed: Signed, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    reg = RegistryConfig("corp", str(signed.root), RegistryKind.FOLDER)
    config_dir = tmp_path / "home"
    pinned = pin_root(reg, None, options(tmp_path), config_dir)
    current = (signed.root / "metadata/root.json").read_bytes()
    md = Metadata[Root].from_bytes(current)
    assert pinned.first_use and pinned.stored == "trust/corp.root.json"
    assert pinned.version == md.signed.version and pinned.fingerprints == fingerprints(md)
    assert (config_dir / pinned.stored).read_bytes() == current
    assert [p.relative_to(config_dir).as_posix() for p in config_dir.rglob("*")] == [
        "trust",
        "trust/corp.root.json",
    ]
    assert capfd.readouterr() == ("", "")  # domain code never prints


def test_a_root_file_is_validated_before_anything_is_written(
    signed: Signed, tmp_path: Path
) -> None:
    reg = RegistryConfig("corp", str(signed.root), RegistryKind.FOLDER)
    good = signed.root / "metadata/1.root.json"
    pinned = pin_root(reg, good, options(tmp_path), tmp_path / "home")
    assert not pinned.first_use and pinned.version == 1
    forged = tmp_path / "forged.json"
    forged.write_bytes(good.read_bytes().replace(b'"version": 1', b'"version": 9'))
    with pytest.raises(SignatureError):
        pin_root(reg, forged, options(tmp_path), tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_an_unsigned_registry_has_no_root_to_trust(tmp_path: Path) -> None:
    reg_dir = build_registry(tmp_path / "reg", sample_packages())
    reg = RegistryConfig("plain", str(reg_dir), RegistryKind.FOLDER)
    with pytest.raises(UsageError, match="not a signed registry"):
        pin_root(reg, None, options(tmp_path), tmp_path / "home")
    assert not (tmp_path / "home").exists()
