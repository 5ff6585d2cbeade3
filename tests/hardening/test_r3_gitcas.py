"""Issue 22 class 2: a git read-modify-commit re-checks its base.

`publish`, `registry sign`, `registry keys rotate` and `registry init --signed` (on a populated
registry) read HEAD, build on it, and move the branch only if it still points there
(publish/gitcas.py). A commit that lands in between (here: a real `git commit` in the
checkout, made from a hook in a function every one of them calls between reading HEAD and
committing) makes them refuse with exit 1 and one line, write nothing, and a re-run keeps both
commits. Two real processes racing on one checkout never revert each other's commit.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from ontoskills.publish import gitops
from ontoskills.publish.gitcas import JOURNAL
from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import init_registry
from ontoskills.publish.worktree import leftovers, worktree_differences
from tests.conftest import REPO, CliRunner
from tests.publish.conftest import AUTHOR, GIT_ENV, make_package
from tests.signing.conftest import make_signed

CHANGED = "error: the registry changed while publishing; run again"
GIT_IDENTITY = {
    **GIT_ENV,
    "GIT_COMMITTER_NAME": "Someone Else",
    "GIT_COMMITTER_EMAIL": "else@example.invalid",
}
# Files a command of ours may change in a commit; a foreign commit here changes NOTES.md only.
OURS = ("packages/", "index.json", "index/", "metadata/")


@pytest.fixture
def cli(cli_inproc: CliRunner, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The CLI entry in-process, so a hook can land a commit mid-command."""
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    return cli_inproc


def git(reg: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(
        ["git", "-C", str(reg), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def foreign_commit(reg: Path, line: str) -> str:
    """What a maintainer's `git commit` in the checkout does: work tree, index, branch."""
    with (reg / "NOTES.md").open("a") as fh:
        fh.write(line + "\n")
    git(reg, "add", "NOTES.md")
    git(reg, "commit", "-q", "-m", f"notes: {line}")
    return git(reg, "rev-parse", "HEAD")


@pytest.fixture
def land_once(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], list[str]]:
    """Hook `gitops.verify_tree` (every command checks its tree there, after reading HEAD and
    before committing): its first call lands a foreign commit. Returns the commits landed."""

    def install(reg: Path) -> list[str]:
        landed: list[str] = []
        real = gitops.verify_tree

        def hook(*args: object, **kwargs: object) -> None:
            if not landed:
                landed.append(foreign_commit(reg, "landed while the command ran"))
            real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(gitops, "verify_tree", hook)
        return landed

    return install


def head(reg: Path) -> pygit2.Commit:
    return pygit2.Repository(str(reg)).head.peel(pygit2.Commit)


def assert_clean(reg: Path) -> None:
    """Work tree and index equal HEAD, nothing of a command left behind."""
    assert worktree_differences(reg) == []
    assert pygit2.Repository(str(reg)).status() == {}
    assert leftovers(reg) == []
    assert sorted(p.name for p in (reg / ".git").iterdir() if "ontoskills" in p.name) == []


def assert_nothing_reverted(reg: Path) -> None:
    """Along the first-parent history every commit changes only its own paths: ours touch
    the registry's files, a foreign one NOTES.md; so no commit undid another's change."""
    repo = pygit2.Repository(str(reg))
    commit = repo.head.peel(pygit2.Commit)
    while commit.parents:
        parent = commit.parents[0]
        paths = {d.delta.new_file.path for d in repo.diff(parent.tree, commit.tree)}
        if commit.message.startswith("notes:"):
            assert paths == {"NOTES.md"}, (commit.message, paths)
        else:
            assert paths and all(p.startswith(OURS) for p in paths), (commit.message, paths)
        commit = parent


def registry_with(tmp: Path, *package_ids: str) -> Path:
    reg = tmp / "registry"
    init_registry(reg, git=True, author=AUTHOR)
    for pid in package_ids:
        publish(
            make_package(tmp / "work", pid),
            PublishOptions(registry=str(reg), author_name=AUTHOR.name, author_email=AUTHOR.email),
        )
    return reg


def in_head(reg: Path, rel: str) -> bool:
    try:
        head(reg).tree[rel]
    except KeyError:
        return False
    return True


# --- a commit lands between reading HEAD and moving it: refused, nothing written ----------


def test_publish_refuses_when_a_commit_lands_meanwhile_and_the_rerun_keeps_both(
    tmp_path: Path, cli: CliRunner, land_once: Callable[[Path], list[str]]
) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    pkg = make_package(tmp_path / "work", "acme/extra")
    landed = land_once(reg)
    proc = cli("publish", str(pkg), "--registry", str(reg))
    assert proc.returncode == 1, proc.stderr
    assert CHANGED in proc.stderr.splitlines()
    assert str(head(reg).id) == landed[0], "the other commit is the branch's tip"
    assert not (reg / "packages/acme/extra").exists() and not in_head(reg, "packages/acme/extra")
    assert_clean(reg)

    proc = cli("publish", str(pkg), "--registry", str(reg))  # the hook fires once
    assert proc.returncode == 0, proc.stderr
    assert str(head(reg).parents[0].id) == landed[0]
    assert in_head(reg, "NOTES.md") and in_head(reg, "packages/acme/extra/package.json")
    assert_clean(reg)
    assert_nothing_reverted(reg)


def test_registry_sign_refuses_and_the_rerun_keeps_both(
    tmp_path: Path, cli: CliRunner, land_once: Callable[[Path], list[str]]
) -> None:
    signed = make_signed(tmp_path / "maintainer")
    signed.publish("acme/tools")
    reg = signed.root
    before = (reg / "metadata/timestamp.json").read_bytes()
    landed = land_once(reg)
    sign = ("registry", "sign", str(reg), "--timestamp", "--keys", str(signed.keys))
    proc = cli(*sign)
    assert proc.returncode == 1, proc.stderr
    assert CHANGED in proc.stderr.splitlines()
    assert str(head(reg).id) == landed[0]
    assert (reg / "metadata/timestamp.json").read_bytes() == before
    assert_clean(reg)

    assert cli(*sign).returncode == 0
    assert str(head(reg).parents[0].id) == landed[0]
    assert (reg / "metadata/timestamp.json").read_bytes() != before
    assert_clean(reg)
    assert_nothing_reverted(reg)
    assert cli("registry", "verify", str(reg)).returncode == 0


def test_keys_rotate_refuses_keeps_the_keys_folder_and_the_rerun_keeps_both(
    tmp_path: Path, cli: CliRunner, land_once: Callable[[Path], list[str]]
) -> None:
    signed = make_signed(tmp_path / "maintainer")
    signed.publish("acme/tools")
    reg, keys = signed.root, signed.keys

    def key_files() -> list[str]:
        return sorted(p.relative_to(keys).as_posix() for p in keys.rglob("*") if p.is_file())

    before = key_files()
    landed = land_once(reg)
    rotate = ("registry", "keys", "rotate", "timestamp", str(reg), "--keys", str(keys))
    proc = cli(*rotate)
    assert proc.returncode == 1, proc.stderr
    assert CHANGED in proc.stderr.splitlines()
    assert str(head(reg).id) == landed[0]
    assert key_files() == before, "no orphan key written, none retired"
    assert_clean(reg)

    assert cli(*rotate).returncode == 0
    assert str(head(reg).parents[0].id) == landed[0]
    assert any(p.startswith("retired/") for p in key_files())
    assert_clean(reg)
    assert_nothing_reverted(reg)
    assert cli("registry", "verify", str(reg)).returncode == 0


def test_init_signed_on_a_populated_registry_refuses_and_the_rerun_keeps_both(
    tmp_path: Path, cli: CliRunner, land_once: Callable[[Path], list[str]]
) -> None:
    reg = registry_with(tmp_path, "acme/tools", "acme/extra")
    keys = tmp_path / "keys"
    landed = land_once(reg)
    init = ("registry", "init", "--signed", str(reg), "--keys", str(keys))
    proc = cli(*init)
    assert proc.returncode == 1, proc.stderr
    assert CHANGED in proc.stderr.splitlines()
    assert str(head(reg).id) == landed[0]
    assert not (reg / "metadata").exists() and not in_head(reg, "metadata")
    assert not list(keys.glob("*.pem")), "the keys of a refused signing are not left behind"
    assert_clean(reg)

    assert cli(*init).returncode == 0
    assert str(head(reg).parents[0].id) == landed[0]
    assert in_head(reg, "metadata/root.json") and in_head(reg, "NOTES.md")
    assert_clean(reg)
    assert_nothing_reverted(reg)
    assert cli("registry", "verify", str(reg)).returncode == 0


# --- git's own locks, interrupted work-tree updates, detached HEAD, the user's edits -------


def test_a_running_git_holding_the_index_is_waited_for_then_refused_with_nothing_written(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    before = head(reg).id
    lock = reg / ".git/index.lock"
    lock.write_bytes(b"")  # a `git commit` in progress
    pkg = make_package(tmp_path / "work", "acme/extra")
    proc = cli("publish", str(pkg), "--registry", str(reg))
    assert proc.returncode == 1, proc.stderr
    assert "index.lock" in proc.stderr
    assert head(reg).id == before and not (reg / "packages/acme/extra").exists()
    assert worktree_differences(reg) == [] and lock.exists(), "its lock is not ours to remove"
    lock.unlink()
    assert cli("publish", str(pkg), "--registry", str(reg)).returncode == 0
    assert_clean(reg)


def test_a_work_tree_update_cut_short_after_the_commit_is_completed_by_the_next_run(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    base = head(reg).id
    from ontoskills.publish import staging

    real = staging.Staging.swap
    calls: list[int] = []

    def disk_full(self: staging.Staging) -> bool:
        if not calls:
            calls.append(1)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self)

    monkeypatch.setattr(staging.Staging, "swap", disk_full)
    pkg = make_package(tmp_path / "work", "acme/tools", "2.0.0")
    assert cli("publish", str(pkg), "--registry", str(reg)).returncode == 1
    # committed, the work tree not yet: the journal says which commit and which paths
    assert head(reg).parents[0].id == base and (reg / ".git" / JOURNAL).is_file()
    assert b'"1.0.0"' in (reg / "packages/acme/tools/package.json").read_bytes()
    proc = cli("publish", str(pkg), "--registry", str(reg))
    assert proc.returncode == 0, proc.stderr
    assert head(reg).parents[0].id == base, "one publish commit, whichever run made it"
    assert b'"2.0.0"' in (reg / "packages/acme/tools/package.json").read_bytes()
    assert_clean(reg)
    assert cli("publish", str(pkg), "--registry", str(reg)).returncode == 2  # now complete


# `ontoskills ARGS`, SIGKILLed right after the branch moved: no cleanup of ours runs.
KILLED_AFTER_SWAP = """
import os, signal, sys
from ontoskills.publish import gitcas
real = gitcas.swap
def swap(*args, **kwargs):
    real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
gitcas.swap = swap
from ontoskills.cli import app
from ontoskills.commands._entry import main
main(app, sys.argv[1:])
"""


def test_a_publish_sigkilled_right_after_its_commit_is_completed_by_the_next(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = tmp_path / "registry"
    init_registry(reg, git=True, author=AUTHOR, sparse=True)
    first = make_package(tmp_path / "work", "acme/tools")
    cli("publish", str(first), "--registry", str(reg), check=True)
    base = head(reg).id
    pkg = make_package(tmp_path / "work", "acme/tools", "2.0.0")
    argv = [sys.executable, "-c", KILLED_AFTER_SWAP, "publish", str(pkg), "--registry", str(reg)]
    killed = subprocess.run(argv, env=_env(tmp_path), capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert head(reg).parents[0].id == base and (reg / ".git" / JOURNAL).is_file()
    assert worktree_differences(reg) != [], "the work tree was not written yet"
    proc = cli("publish", str(pkg), "--registry", str(reg))
    assert proc.returncode == 0, proc.stderr
    assert head(reg).parents[0].id == base, "completed, not committed twice"
    assert b'"2.0.0"' in (reg / "packages/acme/tools/package.json").read_bytes()
    assert_clean(reg)
    assert cli("registry", "verify", str(reg)).returncode == 0


@pytest.mark.parametrize(
    "journal",
    [b"{not json", b'{"commit": "zz", "paths": []}', b'{"commit": "%s", "paths": ["../x"]}'],
)
def test_a_journal_ontoskills_did_not_write_is_refused_and_nothing_moves(
    tmp_path: Path, cli: CliRunner, journal: bytes
) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    before = head(reg).id
    (reg / ".git" / JOURNAL).write_bytes(journal.replace(b"%s", str(before).encode()))
    pkg = make_package(tmp_path / "work", "acme/extra")
    proc = cli("publish", str(pkg), "--registry", str(reg))
    assert proc.returncode == 4, proc.stderr
    assert head(reg).id == before and worktree_differences(reg) == []
    assert not (tmp_path / "x").exists()


def test_signing_cut_short_after_the_commit_never_reuses_a_version(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from ontoskills.signing import repo as signing_repo

    signed = make_signed(tmp_path / "maintainer")
    signed.publish("acme/tools")
    reg = signed.root
    real = signing_repo.write_files
    calls: list[int] = []

    def disk_full(root: Path, files: dict[str, bytes]) -> None:
        if not calls:
            calls.append(1)
            raise OSError(errno.ENOSPC, "No space left on device")
        real(root, files)

    monkeypatch.setattr(signing_repo, "write_files", disk_full)
    sign = ("registry", "sign", str(reg), "--timestamp", "--keys", str(signed.keys))
    assert cli(*sign).returncode == 1
    assert cli(*sign).returncode == 0
    assert_clean(reg)
    repo = pygit2.Repository(str(reg))
    versions = []
    commit = repo.head.peel(pygit2.Commit)
    for _ in range(3):  # HEAD, the first sign's commit, the publish's
        blob = commit.tree["metadata/timestamp.json"]
        versions.append(json.loads(blob.data)["signed"]["version"])
        commit = commit.parents[0]
    assert versions[0] > versions[1] > versions[2], versions
    assert cli("registry", "verify", str(reg)).returncode == 0


def test_a_detached_head_moves_alone_and_a_users_other_edits_stay_uncommitted(
    tmp_path: Path, cli: CliRunner
) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    main = git(reg, "rev-parse", "refs/heads/main")
    git(reg, "checkout", "-q", "--detach")
    readme = reg / "README.md"
    readme.write_text(readme.read_text() + "my uncommitted note\n")
    pkg = make_package(tmp_path / "work", "acme/extra")
    assert cli("publish", str(pkg), "--registry", str(reg)).returncode == 0
    repo = pygit2.Repository(str(reg))
    assert repo.head_is_detached and str(head(reg).parents[0].id) == main
    assert git(reg, "rev-parse", "refs/heads/main") == main, "no branch moved"
    assert "my uncommitted note" in readme.read_text()
    assert "my uncommitted note" not in head(reg).tree["README.md"].data.decode()
    assert [str(d) for d in worktree_differences(reg)] == ["README.md (modified)"]


# --- real processes racing on one checkout ------------------------------------------------


def _env(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        **GIT_IDENTITY,
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "ONTOSKILLS_HOME": str(tmp / "home"),
        "ONTOSKILLS_CACHE_DIR": str(tmp / "cache"),
    }


def _publish(tmp: Path, pkg: Path, reg: Path) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "ontoskills", "publish", str(pkg), "--registry", str(reg)]
    return subprocess.Popen(
        argv,
        env=_env(tmp),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _settle(procs: list[tuple[subprocess.Popen[str], Path]], tmp: Path, reg: Path) -> None:
    """Each publish either succeeded or was refused with one line; a refused one succeeds
    when run again."""
    refused = []
    for proc, pkg in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1), err
        if proc.returncode == 1:
            # refused with one line: HEAD moved, or git's index or ref lock was held by the
            # other writer at that moment (both: nothing written, run again)
            busy = "index.lock" in err or "could not lock" in err
            assert CHANGED in err.splitlines() or busy, err
            refused.append(pkg)
    for pkg in refused:
        again = _publish(tmp, pkg, reg)
        _, err = again.communicate(timeout=300)
        assert again.returncode == 0, err


def test_two_publish_processes_into_one_checkout_keep_both(tmp_path: Path) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    pkgs = [make_package(tmp_path / "work", pid) for pid in ("acme/extra", "beta/kit")]
    procs = [(_publish(tmp_path, pkg, reg), pkg) for pkg in pkgs]
    _settle(iter(procs), tmp_path, reg)
    for pid in ("acme/tools", "acme/extra", "beta/kit"):
        assert in_head(reg, f"packages/{pid}/package.json"), pid
    assert_clean(reg)
    assert_nothing_reverted(reg)


# A maintainer's `git add` + `git commit`, again and again (a failed one is unstaged).
LOOP = """
import pathlib, subprocess
git = ["git", "-C", {reg!r}]
for i in range(400):
    if pathlib.Path({done!r}).exists() and i > 20:
        break
    with open({reg!r} + "/NOTES.md", "a") as fh:
        fh.write(f"line {{i}}\\n")
    ok = subprocess.run(git + ["add", "NOTES.md"]).returncode == 0
    ok = ok and subprocess.run(git + ["commit", "-q", "-m", f"notes: {{i}}"]).returncode == 0
    if not ok:
        subprocess.run(git + ["reset", "-q"])
"""


def test_publish_racing_a_git_commit_loop_reverts_nothing(tmp_path: Path) -> None:
    reg = registry_with(tmp_path, "acme/tools")
    done = tmp_path / "loop.done"
    loop = LOOP.format(reg=str(reg), done=str(done))
    committer = subprocess.Popen(
        [sys.executable, "-c", loop],
        env=_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pkgs = [
        make_package(tmp_path / "work", "acme/tools", "2.0.0"),
        make_package(tmp_path / "work", "acme/extra"),
    ]
    try:
        procs = [(_publish(tmp_path, pkg, reg), pkg) for pkg in pkgs]  # while the loop commits
        for proc, _ in procs:
            proc.wait(timeout=300)
    finally:
        done.write_text("")
        committer.wait(timeout=300)
    _settle(procs, tmp_path, reg)
    assert_nothing_reverted(reg)
    assert b'"2.0.0"' in head(reg).tree["packages/acme/tools/package.json"].data
    assert in_head(reg, "packages/acme/extra/package.json")
    # the loop's last line may be uncommitted (its commit lost a lock race): nothing else
    assert {str(d) for d in worktree_differences(reg)} <= {"NOTES.md (modified)"}
