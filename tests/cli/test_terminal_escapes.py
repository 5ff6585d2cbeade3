"""Text that reaches a terminal is never a terminal sequence: a registry's skill text with ESC
(retitle the window, hide what follows), a carriage return (overwrite the line), C1 controls
or rich markup is shown escaped, in results, in `show` and in warnings and errors. --json is
json.dumps' business (controls become \\u escapes)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ontoskills.commands._output import printable
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry

# OSC 0 (set the window title), CSI "erase line", a carriage return, a C1 CSI, rich markup.
HOSTILE = "Fill pdf forms\x1b]0;pwned\x07 now\x1b[2K\rsafe \x9b31m [bold red]loud[/] [/x]"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    skill = SkillSpec("forms", HOSTILE, intents=("fill a pdf form",))
    return build_registry(tmp_path / "reg", [PackageSpec("acme/forms", [skill])])


def test_printable_escapes_controls_but_keeps_newlines_and_tabs() -> None:
    assert printable("a\x1b[31mb\rc\x9bd\x7f\te\nf") == "a\\x1b[31mb\\x0dc\\x9bd\\x7f\te\nf"
    assert printable("plain text, é, 漢字") == "plain text, é, 漢字"


def test_skill_text_with_terminal_sequences_is_shown_escaped(
    cli_inproc: CliRunner, registry: Path
) -> None:
    install = cli_inproc("--registry", str(registry), "install", "acme/forms", check=True)
    for args in (("search", "fill a pdf form"), ("show", "acme/forms/forms")):
        proc = cli_inproc(*args, check=True)
        for stream in (proc.stdout, proc.stderr):
            assert not RAW.search(stream), (args, stream)
        assert "\\x1b]0;pwned\\x07" in proc.stdout, (args, proc.stdout)
        assert "[bold red]loud[/]" in proc.stdout  # markup is text, not style
    assert not RAW.search(install.stdout + install.stderr)
    doc = json.loads(cli_inproc("--json", "show", "acme/forms/forms", check=True).stdout)
    assert doc["description"] == HOSTILE  # the JSON keeps the real text


def test_an_error_naming_hostile_input_is_one_escaped_line(cli_inproc: CliRunner) -> None:
    proc = cli_inproc("show", "acme/x\x1b]0;pwned\x07/y")
    assert proc.returncode != 0
    assert not RAW.search(proc.stderr) and "\\x1b" in proc.stderr, proc.stderr
