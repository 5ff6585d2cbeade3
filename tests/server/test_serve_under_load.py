"""`ontoskills serve` under load: concurrent SDK client tasks while the real CLI installs,
toggles, updates and removes packages in the same home (issue 7 item 4, CI size; the long
run is benchmarks/serve_load.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.helpers.registry import build_registry, sample_packages
from tests.helpers.serve_load import DROPPED, MOVING_SKILL, moving_package, run_load


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def test_serve_under_load_with_concurrent_installs(
    tmp_path: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    registry = build_registry(tmp_path / "reg", [*sample_packages(), moving_package()])
    cli("--registry", str(registry), "install", "acme/devtools", DROPPED, check=True)
    home = Path(env["ONTOSKILLS_HOME"])
    work = tmp_path / "load"
    work.mkdir()

    res = run_load(home, registry, calls=300, clients=4, cycles=2, workdir=work)

    assert res.op_failures == []
    # 2 cycles of install/disable/enable/update/remove, then install + remove of DROPPED.
    assert res.ops == {"install": 3, "disable": 2, "enable": 2, "update": 2, "remove": 3}
    assert res.calls >= 300, res
    assert (res.error_results, res.protocol_errors, res.malformed) == (0, 0, 0), res.samples
    assert res.stdout_lines >= res.calls and res.non_jsonrpc_lines == 0
    assert res.final_probe_top == MOVING_SKILL  # the installed package is searchable
    assert not res.final_dropped_served  # the removed one is gone
    # Clients saw the churned package come and go (9 state changes in a full run).
    assert res.reloads_observed >= 2
    assert res.server_alive
