"""The registry kind table (sources/__init__.py): one module and one class per RegistryKind,
capabilities asked of the source, an unknown kind refused where it is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontoskills import lockfile
from ontoskills.errors import ConfigError, LockFormatError, UsageError
from ontoskills.paths import Cache
from ontoskills.registries import RegistryConfig, RegistryKind
from ontoskills.sources import KINDS, BaseSource, SourceOptions, open_source, source_class


def test_every_kind_has_one_class_that_says_it_is_that_kind() -> None:
    assert set(KINDS) == set(RegistryKind)
    for kind in RegistryKind:
        cls = source_class(kind)
        assert issubclass(cls, BaseSource) and cls.kind == kind
        assert source_class(str(kind)) is cls  # the lock and config hold the plain word


def test_capabilities_are_asked_not_inferred_from_the_name() -> None:
    caps = {k: (source_class(k).parallel_fetch, source_class(k).vcs) for k in RegistryKind}
    assert caps == {
        RegistryKind.HTTP: (True, False),
        RegistryKind.FOLDER: (False, False),
        RegistryKind.GIT: (False, True),
        RegistryKind.SKILLS: (False, False),  # an instance takes its git or folder source's
        RegistryKind.OCI: (True, False),
    }


def test_an_unknown_kind_is_refused_where_it_is_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown kind 'svn'"):
        RegistryConfig("r", "https://example.invalid/", "svn")
    with pytest.raises(UsageError, match="unknown registry kind"):
        source_class("svn")


def test_a_source_opened_from_the_table_reads_its_registry(tmp_path: Path) -> None:
    (tmp_path / "reg").mkdir()
    (tmp_path / "reg" / "index.json").write_text('{"packages": []}')
    src = open_source(
        RegistryConfig("r", str(tmp_path / "reg"), "folder"), SourceOptions(Cache(tmp_path / "c"))
    )
    assert src.kind == RegistryKind.FOLDER and src.commit is None and src.is_local
    assert src.probe("nothing.json", max_bytes=10) is None  # the shared default
    assert src.list_package("") is not None


def test_a_lock_naming_an_unknown_kind_is_exit_3(tmp_path: Path) -> None:
    path = tmp_path / "ontoskills.lock"
    path.write_text(
        'lock_version = 1\n[registries.r]\nkind = "svn"\nurl = "https://example.invalid/"\n'
    )
    with pytest.raises(LockFormatError, match=r"kind must be one of .*'svn'") as info:
        lockfile.load(path)
    assert info.value.exit_code == 3
