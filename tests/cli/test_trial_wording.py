"""What a new user reads, checked on the real CLI (round-3 trial): counts, next steps and
the names in error lines, each found by walking the product from scratch."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages


def test_mirror_counts_one_file_in_the_singular(cli_inproc: CliRunner, tmp_path: Path) -> None:
    origin = build_registry(tmp_path / "origin", sample_packages())
    mirror = tmp_path / "mirror"
    args = ("--registry", str(origin), "mirror", "acme/devtools", "--to", str(mirror))
    cli_inproc(*args, check=True)
    (origin / "packages/acme/devtools/LICENSE").write_bytes(b"A\n")  # one new file, 2 bytes
    again = cli_inproc(*args, check=True)
    assert "1 file copied (2 bytes)," in again.stderr, again.stderr
    assert "1 files" not in again.stderr
