"""The real CLI entry (`commands._entry.main`, the one `ontoskills` runs), in this process.

Same argument parsing, contexts, domain and renderers as the console script; only no new
interpreter (which costs ~0.5 s of CPU per call). For contracts that need a real process
(exit by signal, another process holding the home lock, a closed stdin), use the `cli`
fixture of tests/conftest.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from tests.conftest import CliRunner, subprocess_runner

# Read once, when ontoskills.limits is imported: a call that sets them needs a new process.
PROCESS_START_VARIABLES = frozenset({"ONTOSKILLS_MAX_FILE_MB", "ONTOSKILLS_MAX_PACKAGE_MB"})


@contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def inprocess_runner(capfd: pytest.CaptureFixture[str], env: dict[str, str]) -> CliRunner:
    """A `cli`-compatible runner: `run("install", "a/b", check=True)` -> CompletedProcess.
    A call setting a variable read at interpreter start runs in a subprocess instead."""
    from ontoskills.cli import app
    from ontoskills.commands._entry import main

    in_a_process = subprocess_runner(env)

    def run(
        *args: str,
        check: bool = False,
        extra_env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        if input is not None:
            raise ValueError("stdin is a subprocess contract: use the `cli` fixture")
        if PROCESS_START_VARIABLES & set(extra_env or {}):
            return in_a_process(*args, check=check, extra_env=extra_env, timeout=timeout)
        capfd.readouterr()  # drop anything printed before this call
        code: int | str | None = 0
        with _environ(extra_env or {}):
            try:
                main(app, list(args))
            except SystemExit as exc:
                code = exc.code
        out, err = capfd.readouterr()
        rc = code if isinstance(code, int) else (0 if code is None else 1)
        proc = subprocess.CompletedProcess(["ontoskills", *args], rc, out, err)
        if check and rc != 0:
            raise AssertionError(
                f"ontoskills {' '.join(args)} exited {rc}\nstdout:\n{out}\nstderr:\n{err}"
            )
        return proc

    return run


InProcess = Callable[..., subprocess.CompletedProcess[str]]
