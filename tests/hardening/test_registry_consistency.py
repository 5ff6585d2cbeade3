"""Issue 13 class 3: `registry verify` covers everything a client reads, and clients never
trust a sparse entry above what index.json says.

- sparse entries (`index/<a>/<p>.json`) and `index/config.json` must agree with index.json
  (tier, manifest path, version, any field; no entry for an unlisted package): errors;
- a client takes the LESS trusted tier when a sparse entry and index.json disagree (folder,
  git and HTTP), and `outdated` agrees with what install recorded;
- a git checkout whose work tree differs from the verified commit is reported (byte for byte);
- a dead publisher's `.pkg.publish-*` / `.pkg.old-*` / `.index.json.*.tmp` are warnings;
- a home and a local registry that contain each other are refused (exit 2) for install, ci
  and update, before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ontoskills import lockfile
from ontoskills.publish.publish import PublishOptions, publish
from ontoskills.publish.registry import init_registry
from ontoskills.sources.sparse import CONFIG, write_sparse_index
from tests.conftest import CliRunner
from tests.helpers.faults import FaultServer
from tests.helpers.gitsettings import add_tricky_assets
from tests.helpers.registry import build_registry, commit_all, sample_packages
from tests.publish.conftest import make_package


@pytest.fixture
def cli(cli_inproc: CliRunner) -> CliRunner:
    """These tests are about what the verbs do and print: the CLI entry, in-process
    (tests/helpers/inproc.py); tests/cli/ runs the contract in real subprocesses."""
    return cli_inproc


def _sparse_registry(root: Path) -> Path:
    """The sample registry (its own quirks make `verify` report errors): for client tests."""
    build_registry(root, sample_packages())
    write_sparse_index(root)
    return root


def _clean_registry(tmp: Path, *, sparse: bool = True, git: bool = False) -> Path:
    """A registry `registry verify` passes: made by `registry init` + `publish` (acme/tools
    official, with CRLF and exec assets; acme/design community), committed when `git`."""
    reg = tmp / "reg"
    init_registry(reg, git=False, sparse=sparse)
    tools = add_tricky_assets(make_package(tmp, "acme/tools"))
    publish(tools, PublishOptions(registry=str(reg), trust="official"))
    publish(make_package(tmp, "acme/design"), PublishOptions(registry=str(reg)))
    if git:
        commit_all(reg)
    return reg


TOOLS = "packages/acme/tools"


def _edit_entry(reg: Path, pid: str, **changes: Any) -> None:
    path = reg / "index" / f"{pid}.json"
    entry = json.loads(path.read_text())
    entry.update(changes)
    path.write_text(json.dumps(entry, sort_keys=True) + "\n")


def _verify(cli: CliRunner, where: str) -> tuple[int, list[dict[str, Any]]]:
    proc = cli("registry", "verify", where, "--json")
    doc = json.loads(proc.stdout)
    return proc.returncode, doc["findings"]


def _codes(findings: list[dict[str, Any]], level: str) -> set[str]:
    return {f["code"] for f in findings if f["level"] == level}


# --- registry verify: the sparse index ---------------------------------------------------


def test_a_clean_sparse_registry_verifies_without_sparse_findings(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path)
    code, findings = _verify(cli, str(reg))
    assert code == 0, findings
    assert not {c for c in _codes(findings, "warning") if c.startswith("sparse")}


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"trust_tier": "official"}, "trust_tier: 'official' here, 'community' in index.json"),
        ({"manifest_path": "packages/acme/tools/package.json"}, "manifest_path"),
        ({"version": "9.9.9"}, "version: '9.9.9' here, None in index.json"),
        ({"source_kind": "skill"}, "source_kind"),
    ],
)
@pytest.mark.parametrize("kind", ["folder", "git", "http"])
def test_a_sparse_entry_that_disagrees_with_index_json_is_an_error(
    kind: str, edit: dict[str, str], needle: str, cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path)
    _edit_entry(reg, "acme/design", **edit)
    if kind == "git":
        commit_all(reg)
    with FaultServer(reg) as srv:
        code, findings = _verify(cli, srv.url if kind == "http" else str(reg))
    assert code == 4
    bad = [f for f in findings if f["code"] == "sparse-mismatch"]
    assert len(bad) == 1 and bad[0]["package"] == "acme/design", findings
    assert needle in bad[0]["message"]


def test_index_json_raising_a_tier_without_the_sparse_entry_is_an_error_too(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path)
    index = json.loads((reg / "index.json").read_text())
    for e in index["packages"]:
        e["trust_tier"] = "official"
    (reg / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    code, findings = _verify(cli, str(reg))
    assert code == 4
    assert {"sparse-config", "sparse-mismatch"} <= _codes(findings, "error")


@pytest.mark.parametrize("kind", ["folder", "git"])
def test_a_sparse_entry_for_a_package_index_json_lacks_is_an_error(
    kind: str, cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path)
    smuggled = {
        "package_id": "evil/pkg",
        "trust_tier": "official",
        "manifest_path": "packages/acme/tools/package.json",
    }
    (reg / "index/evil").mkdir()
    (reg / "index/evil/pkg.json").write_text(json.dumps(smuggled))
    if kind == "git":
        commit_all(reg)
    code, findings = _verify(cli, str(reg))
    assert code == 4
    assert [f["package"] for f in findings if f["code"] == "sparse-extra"] == ["evil/pkg"]


def test_a_stale_config_is_an_error_a_missing_entry_a_warning(
    cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path)
    (reg / "index/acme/tools.json").unlink()
    code, findings = _verify(cli, str(reg))
    assert code == 0 and "sparse-missing" in _codes(findings, "warning")
    config = json.loads((reg / CONFIG).read_text())
    config["index_sha256"] = "0" * 64
    (reg / CONFIG).write_text(json.dumps(config))
    code, findings = _verify(cli, str(reg))
    assert code == 4 and "sparse-config" in _codes(findings, "error")
    (reg / CONFIG).write_text('{"sparse_version": 99}')  # clients ignore it: a warning
    code, findings = _verify(cli, str(reg))
    assert code == 0 and "sparse-version" in _codes(findings, "warning")


# --- clients: the less trusted tier wins -------------------------------------------------


@pytest.fixture
def lock_tiers(env: dict[str, str]) -> Any:
    def read() -> dict[str, str]:
        lock = lockfile.load(Path(env["ONTOSKILLS_HOME"]) / "ontoskills.lock")
        return {pid: p.trust_tier for pid, p in lock.packages.items()}

    return read


def _smuggle_package(reg: Path) -> None:
    """evil/pkg: a real package folder and a sparse entry saying official, but no line in
    index.json (what a reviewer reads)."""
    src, dest = reg / "packages/acme/design", reg / "packages/evil/pkg"
    dest.parent.mkdir(parents=True)
    shutil.copytree(src, dest)
    manifest = json.loads((dest / "package.json").read_text())
    manifest["package_id"] = "evil/pkg"
    (dest / "package.json").write_text(json.dumps(manifest))
    (reg / "index/evil").mkdir()
    entry = {
        "package_id": "evil/pkg",
        "trust_tier": "official",
        "manifest_path": "packages/evil/pkg/package.json",
    }
    (reg / "index/evil/pkg.json").write_text(json.dumps(entry))


@pytest.mark.parametrize("kind", ["folder", "git", "http"])
def test_a_client_records_the_less_trusted_of_sparse_entry_and_index_json(
    kind: str, cli: CliRunner, tmp_path: Path, lock_tiers: Any
) -> None:
    reg = _sparse_registry(tmp_path / "reg")
    _edit_entry(reg, "acme/design", trust_tier="official")  # index.json: community
    _smuggle_package(reg)
    if kind == "git":
        commit_all(reg)
    with FaultServer(reg) as srv:
        url = srv.url if kind == "http" else str(reg)
        # configured and trusted up to official, so no ad-hoc cap hides the answer
        cli("registry", "add", "mine", url, "--trust", "official", check=True)
        cli("install", "acme/design", "acme/devtools", "evil/pkg", check=True)
        assert lock_tiers() == {
            "acme/design": "community",
            "acme/devtools": "official",  # entry and index.json agree
            "evil/pkg": "community",  # index.json does not list it at all
        }
        out = json.loads(cli("outdated", "--json", check=True).stdout)
        assert {r["status"] for r in out["packages"]} == {"current"}, out
        proc = cli("install", "acme/design", "--min-trust", "official", "--force")
        assert proc.returncode == 4 and "community" in proc.stderr


# --- registry verify: the work tree of a git checkout, leftovers ---------------------------


@pytest.fixture
def git_reg(tmp_path: Path) -> Path:
    return _clean_registry(tmp_path, sparse=False, git=True)


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda r: (r / f"{TOOLS}/lint/ontoskill.ttl").write_bytes(b"# edited\n"), "modified"),
        (lambda r: (r / f"{TOOLS}/lint/ontoskill.ttl").unlink(), "deleted"),
        (lambda r: (r / f"{TOOLS}/extra.md").write_text("x"), "untracked"),
        (lambda r: os.chmod(r / f"{TOOLS}/lint/scripts/run.sh", 0o644), "mode"),
        (lambda r: (r / "index.json").write_text('{"packages": []}\n'), "modified"),
        (lambda r: (r / "packages/acme/.gitignored.ttl").write_text("x"), "untracked"),
    ],
)
def test_a_work_tree_that_differs_from_the_verified_commit_is_an_error(
    change: Any, what: str, cli: CliRunner, git_reg: Path
) -> None:
    code, findings = _verify(cli, str(git_reg))
    assert code == 0 and "worktree-differs" not in _codes(findings, "warning"), findings
    change(git_reg)
    code, findings = _verify(cli, str(git_reg))
    assert code == 4
    bad = [f for f in findings if f["code"] == "worktree-differs"]
    assert len(bad) == 1 and f"({what})" in bad[0]["message"], findings


def test_differences_outside_what_clients_read_are_warnings(cli: CliRunner, git_reg: Path) -> None:
    (git_reg / "NOTES.txt").write_text("maintainer scratch\n")
    code, findings = _verify(cli, str(git_reg))
    assert code == 0 and "worktree-differs" in _codes(findings, "warning")


def test_crlf_rules_cannot_hide_a_difference(cli: CliRunner, git_reg: Path) -> None:
    """git's own status would call a CRLF->LF rewrite clean under `text=auto`; bytes differ."""
    (git_reg / ".gitattributes").write_text("* text=auto\n")
    commit_all(git_reg)
    notes = git_reg / f"{TOOLS}/lint/notes-crlf.md"
    notes.write_bytes(notes.read_bytes().replace(b"\r\n", b"\n"))
    code, findings = _verify(cli, str(git_reg))
    assert code == 4 and "worktree-differs" in _codes(findings, "error")


@pytest.mark.parametrize("git", [False, True])
def test_a_dead_publishers_leftovers_are_warnings(
    git: bool, cli: CliRunner, tmp_path: Path
) -> None:
    reg = _clean_registry(tmp_path, git=git)
    (reg / "packages/acme/.tools.publish-4242/lint").mkdir(parents=True)
    (reg / "packages/acme/.tools.publish-4242/lint/half.ttl").write_text("x")
    (reg / "packages/acme/.tools.old-4243").mkdir()
    (reg / ".index.json.x1y2.tmp").write_text("{")
    code, findings = _verify(cli, str(reg))
    assert code == 0, findings
    left = sorted(f["message"].split()[0] for f in findings if f["code"] == "leftover-publish")
    assert left == [
        ".index.json.x1y2.tmp",
        "packages/acme/.tools.old-4243",
        "packages/acme/.tools.publish-4242",
    ]
    assert "worktree-differs" not in _codes(findings, "error")


# --- a home and a local registry that contain each other -----------------------------------


@pytest.mark.parametrize(
    "layout", ["home-in-registry", "registry-in-home", "via-symlink", "file-url"]
)
def test_overlapping_home_and_registry_are_refused_before_anything_is_written(
    layout: str, cli: CliRunner, tmp_path: Path
) -> None:
    if layout == "registry-in-home":
        home = tmp_path / "home"
        reg = build_registry(home / "my-registry", sample_packages())
    else:
        reg = build_registry(tmp_path / "reg", sample_packages())
        home = reg / "packages" / "home"
        if layout == "via-symlink":
            (tmp_path / "link").symlink_to(reg / "packages", target_is_directory=True)
            home = tmp_path / "link" / "home"
    where = f"file://{reg}" if layout == "file-url" else str(reg)
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    proc = cli("--home", str(home), "--registry", where, "install", "acme/devtools")
    assert proc.returncode == 2, proc.stderr
    assert "the registry" in proc.stderr and "hint:" in proc.stderr
    after = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert after == before, "nothing written, not even the home lock"
    assert not (home / "ontologies").exists()


def test_ci_and_update_refuse_an_overlapping_home_too(cli: CliRunner, tmp_path: Path) -> None:
    reg = build_registry(tmp_path / "reg", sample_packages())
    lock = tmp_path / "proj" / "ontoskills.lock"
    lock.parent.mkdir()
    args = ["--lockfile", str(lock)]
    cli("--home", str(tmp_path / "ok"), *args, "--registry", str(reg), "install", "acme/devtools",
        check=True)  # fmt: skip
    inside = reg / "packages" / "h"
    for verb in ("ci", "update"):
        proc = cli("--home", str(inside), *args, verb)
        assert proc.returncode == 2, (verb, proc.stderr)
        assert "the registry" in proc.stderr
        assert not (inside / "ontologies").exists()
