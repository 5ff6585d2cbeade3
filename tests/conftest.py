from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

# The suite must pass on a fresh machine: no git identity, no global or system git config,
# nothing in ~. A developer's machine (and this project's shared ones) has some, which would
# hide a test that leans on it (one did: `registry init` committing as the machine's user).
# Every process of the suite gets an empty home of its own, set before anything imports
# pygit2 (libgit2 reads its config paths once).
_USER_HOME = Path(tempfile.mkdtemp(prefix="ontoskills-tests-home-"))
atexit.register(shutil.rmtree, _USER_HOME, True)
os.environ.update(
    HOME=str(_USER_HOME),
    XDG_CONFIG_HOME=str(_USER_HOME / ".config"),
    GIT_CONFIG_NOSYSTEM="1",
    GIT_CONFIG_GLOBAL=os.devnull,
)
for _key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
    os.environ.pop(_key, None)
os.environ.pop("EMAIL", None)

from tests.helpers.domain import Domain  # noqa: E402  (after the environment above)

# A suite started in the background by a non-interactive shell (`sh -c '... &'`, nohup)
# inherits SIGINT ignored, and every `ontoskills` child it starts would too (an ignored
# signal stays ignored across exec): the Ctrl-C tests would then measure the shell, not us.
# A Python handler here is reset to the default in each child, so children see Ctrl-C.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONTOSKILLS_SHARED", REPO.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """A path inside ../shared, or skip the test when it is absent (a user's fresh clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (../shared is not available)")
    return path


@pytest.fixture
def ontostore() -> Path:
    return shared_path("ontostore", "index.json").parent


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated home, cache and HF cache for both in-process and subprocess use."""
    values = {
        "ONTOSKILLS_HOME": str(tmp_path / "home"),
        "ONTOSKILLS_CACHE_DIR": str(tmp_path / "cache"),
        "HF_HOME": str(tmp_path / "hf"),
        "NO_COLOR": "1",
    }
    for key in ("ONTOSKILLS_LOCKFILE", "ONTOSKILLS_REGISTRY", "ONTOSKILLS_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(env: dict[str, str]) -> CliRunner:
    """Run the real CLI in a subprocess: `cli("install", "a/b", check=True)`."""
    return subprocess_runner(env)


@pytest.fixture
def cli_process(env: dict[str, str]) -> CliRunner:
    """The subprocess CLI, for the tests of a module whose `cli` runs in-process."""
    return subprocess_runner(env)


def subprocess_runner(env: dict[str, str]) -> CliRunner:
    def run(
        *args: str,
        check: bool = False,
        extra_env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **env, "PYTHONPATH": str(REPO), **(extra_env or {})}
        proc = subprocess.run(
            [sys.executable, "-m", "ontoskills", *args],
            capture_output=True,
            text=True,
            env=full_env,
            input=input,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"ontoskills {' '.join(args)} exited {proc.returncode}\n"
                f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
            )
        return proc

    return run


@pytest.fixture
def cli_inproc(env: dict[str, str], capfd: pytest.CaptureFixture[str]) -> CliRunner:
    """The same CLI entry as `cli`, in this process (no interpreter start-up): for tests of
    what a verb prints and returns. Stdin, signals and a second process need `cli`."""
    from tests.helpers.inproc import inprocess_runner

    return inprocess_runner(capfd, env)


@pytest.fixture
def domain(env: dict[str, str]) -> Domain:
    """The install domain in-process on the `env` home (tests/helpers/domain.py)."""
    return Domain()
