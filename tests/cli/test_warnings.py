"""A command's warnings, wherever the domain emits them, reach the user exactly once each: on
stderr as `warning: ...` lines, and under `--json` in the document's `warnings` list (also
when the command then fails). Before, only `Report.warnings` reached the JSON: the index's
unknown trust tier, a package's claimed tier and hidden Unicode went to stderr only, and
`publish` printed its package warnings twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry

ZWSP = "\u200b"
# One warning from each place the domain emits them during `install`.
EXPECTED = {
    "index": "acme/tiers: unknown trust tier 'gold', using community",
    "plan": "acme/claims declares trust tier 'official'; the registry index says 'community'",
    "fetch": "acme/claims: claims/ontoskill.ttl contains invisible/bidi characters",
}


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return build_registry(
        tmp_path / "reg",
        [
            PackageSpec(
                "acme/claims",
                [SkillSpec("claims", f"Looks{ZWSP} harmless", intents=("claim",))],
                trust_tier="community",
                declared_tier="official",
            ),
            PackageSpec("acme/tiers", [SkillSpec("tiers", "Tiers")], trust_tier="gold"),
        ],
    )


def found(text: str, needle: str) -> int:
    return sum(needle in line for line in text.splitlines())


def test_every_install_warning_is_in_the_json_once(cli_inproc: CliRunner, registry: Path) -> None:
    proc = cli_inproc("--json", "--registry", str(registry), "install", "acme/claims")
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(proc.stdout)["warnings"]
    for what, needle in EXPECTED.items():
        assert sum(needle in w for w in warnings) == 1, (what, warnings)
        assert found(proc.stderr, needle) == 1, (what, proc.stderr)  # stderr too, once
    assert len(warnings) == len(set(warnings))


def test_every_install_warning_is_on_stderr_once_in_text_mode(
    cli_inproc: CliRunner, registry: Path
) -> None:
    proc = cli_inproc("--registry", str(registry), "install", "acme/claims")
    assert proc.returncode == 0, proc.stderr
    for what, needle in EXPECTED.items():
        lines = [line for line in proc.stderr.splitlines() if needle in line]
        assert len(lines) == 1, (what, proc.stderr)
        assert lines[0].startswith("warning: "), lines
    assert proc.stdout == ""


def test_a_failing_command_keeps_the_warnings_it_emitted(
    cli_inproc: CliRunner, registry: Path
) -> None:
    proc = cli_inproc(
        "--json", "--registry", str(registry), "install", "acme/claims", "acme/absent"
    )
    assert proc.returncode == 7, proc.stderr
    doc = json.loads(proc.stdout)
    assert "acme/absent" in doc["error"]["message"]
    assert any(EXPECTED["plan"] in w for w in doc["warnings"]), doc


def test_publish_warnings_once(cli_inproc: CliRunner, tmp_path: Path) -> None:
    """A package warning (a file the manifest does not list) was printed by the domain and
    again by the renderer; now once on stderr, once in the JSON, with the others."""
    src = build_registry(
        tmp_path / "src",
        [
            PackageSpec(
                "acme/notes",
                [SkillSpec("jot", "Jot a note", vectors=False, depends=("elsewhere",))],
            )
        ],
    )
    pkg = tmp_path / "pkg"
    shutil.copytree(src / "packages/acme/notes", pkg)
    cli_inproc("pack", str(pkg), check=True)
    (pkg / "stray.txt").write_text("not in the manifest\n")
    cli_inproc("registry", "init", str(tmp_path / "reg"), "--no-git", check=True)
    text = cli_inproc("publish", str(pkg), "--registry", str(tmp_path / "reg"), "--dry-run")
    assert text.returncode == 0, text.stderr
    warned = [line for line in text.stderr.splitlines() if line.startswith("warning: ")]
    assert any("stray.txt" in w for w in warned), text.stderr
    assert any("elsewhere" in w for w in warned), text.stderr
    assert len(warned) == len(set(warned)), text.stderr
    doc = json.loads(
        cli_inproc(
            "--json", "publish", str(pkg), "--registry", str(tmp_path / "reg"), "--dry-run"
        ).stdout
    )
    assert [f"warning: {w}" for w in doc["warnings"]] == warned
