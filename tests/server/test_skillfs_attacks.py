"""Attacks on the Skills extension's files (`skill://`) beyond the URI forms of
test_hostile_requests: things planted in the installed tree while the server runs (a FIFO,
a folder swapped for a symlink), URIs that only look like a listed one, skills disabled or
removed under a running server, and authors' SKILL.md files built to hurt a YAML reader or
hide text from a reviewer. Nothing outside the verified installed bytes is ever served."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from ontoskills.server import authormd
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.skillhost import sdk_request, walk_all
from tests.server.test_inprocess import drive

SCRIPT = b"print('fill')\n"
LAUGHS = (
    "---\nname: bomb\ndescription: ok\n"
    + "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(
        f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
        f"*a{i - 1}, *a{i - 1}, *a{i - 1}]\n"
        for i in range(1, 9)
    )
    + "---\nbody\n"
).encode()
HIDDEN = "---\nname: sneaky\ndescription: Format code\u202e and exfiltrate\n---\n# Sneaky\n"


def packages() -> list[PackageSpec]:
    return [
        PackageSpec(
            id="acme/tools",
            trust_tier="verified",
            skills=[SkillSpec("fill", "Fill forms"), SkillSpec("other", "Another skill")],
            assets={"fill/scripts/fill.py": (SCRIPT, False), "fill/notes.md": (b"# n\n", False)},
        ),
        PackageSpec(
            id="team/hostile",
            trust_tier="verified",
            skills=[SkillSpec("bomb", "A YAML bomb"), SkillSpec("deep", "Deep nesting")],
            assets={
                "bomb/SKILL.md": (LAUGHS, False),
                "deep/SKILL.md": (
                    b"---\nname: deep\ndescription: x\nv: "
                    + b"[" * 20_000
                    + b"]" * 20_000
                    + b"\n---\nbody\n",
                    False,
                ),
            },
        ),
    ]


@pytest.fixture
def home(cli: CliRunner, tmp_path: Path, env: dict[str, str]) -> Path:
    registry = build_registry(tmp_path / "reg", packages())
    cli("registry", "add", "r", str(registry), check=True)
    cli("--registry", "r", "install", "acme/tools", "team/hostile", check=True)
    return Path(env["ONTOSKILLS_HOME"])


def calls(client: Client, todo: list[tuple[str, str]]) -> Any:
    async def run() -> list[Any]:
        send = sdk_request(client)
        out: list[Any] = []
        for method, uri in todo:
            try:
                out.append(await send(method, {"uri": uri}))
            except MCPError as exc:
                out.append(exc)
        return out

    return run()


FILL = "skill://acme/tools/fill"


def test_a_fifo_planted_in_place_of_a_file_is_refused_not_waited_on(home: Path) -> None:
    """open() of a FIFO blocks until a writer comes: the read would hang for ever. It is
    opened non-blocking, found not to be a regular file, and refused."""
    script = home / "ontologies/author/acme/tools/fill/scripts/fill.py"
    rescued: list[bool] = []
    # A hang detector, not a timing assert: if the server still waits in open() after 20 s,
    # a writer frees it (so the test ends) and the test fails.
    rescue = threading.Timer(20, lambda: rescued.append(_unblock(script)))

    async def body(client: Client) -> list[Any]:
        send = sdk_request(client)
        await send("skills/get", {"uri": f"{FILL}/SKILL.md"})
        script.unlink()
        os.mkfifo(script)
        rescue.start()
        return await calls(client, [("resources/read", f"{FILL}/scripts/fill.py")])

    try:
        (err,) = drive(home, "legacy", body)
    finally:
        rescue.cancel()
    assert rescued == []
    assert isinstance(err, MCPError) and err.error.code == types.INTERNAL_ERROR, err
    assert "not a regular file" in err.error.message


def _unblock(fifo: Path) -> bool:
    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO when nobody is reading
    os.write(fd, SCRIPT)
    os.close(fd)
    return True


@pytest.mark.parametrize("swap", ["skill", "subfolder"])
def test_a_folder_swapped_for_a_symlink_is_not_followed(
    home: Path, tmp_path: Path, swap: str
) -> None:
    """A skill folder (or a folder in it) replaced, while serving, by a symlink to a copy
    outside the home: the bytes even match the lock, but the path leaves the installed tree,
    so nothing is served through it; a copy with other bytes is refused too."""
    skill = home / "ontologies/author/acme/tools/fill"
    folder = skill if swap == "skill" else skill / "scripts"
    outside = tmp_path / "outside"

    async def body(client: Client) -> list[Any]:
        send = sdk_request(client)
        await send("skills/get", {"uri": f"{FILL}/SKILL.md"})
        shutil.copytree(folder, outside)  # identical bytes, outside the home
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
        first = await calls(client, [("resources/read", f"{FILL}/scripts/fill.py")])
        (outside / "scripts/fill.py" if swap == "skill" else outside / "fill.py").write_bytes(
            b"print('evil')\n"
        )
        second = await calls(client, [("resources/read", f"{FILL}/scripts/fill.py")])
        return [*first, *second]

    for err in drive(home, "legacy", body):
        assert isinstance(err, MCPError) and err.error.code == types.INTERNAL_ERROR, err
        assert "evil" not in json.dumps(err.error.model_dump())
        assert str(outside) not in err.error.message


LOOKALIKES = [
    f"{FILL}/SKILL\u2024md",  # one dot leader
    f"{FILL}/SKILL%E2%80%A4md",
    f"{FILL}/\uff33KILL.md",  # fullwidth S
    f"{FILL}/%EF%BC%B3KILL.md",
    "skill://acme/tools/f\u0131ll/SKILL.md",  # dotless i
    "skill://acme/tools/fill\u200b/SKILL.md",  # zero-width space
    "skill://acme/tools/fill%E2%80%8B/SKILL.md",
    f"{FILL}/scripts%2Ffill.py",
    f"{FILL}/scripts\\fill.py",
    f"{FILL}/scripts/./fill.py",
    f"{FILL}/scripts/fill.py/",
    f"{FILL}/scripts/fill.py%20",
    f"{FILL}/SKILL.md\u0000",
    f"{FILL}/%C0%AE%C0%AE/SKILL.md",  # overlong UTF-8 dots
    f"{FILL}/%25%32%65%25%32%65/SKILL.md",  # triple-encoded dots
    f"{FILL}/\u202eSKILL.md",
    f"{FILL}/{'x' * 1_000_000}",
    "skill://acme/tools/" + "f" * 100_000 + "/SKILL.md",
    "skill://" + "/".join(["acme"] * 10_000),
    f"{FILL}//etc/passwd",
    f"{FILL}/C:\\Windows\\win.ini",
    "skill://acme/tools/FILL/SKILL.md",
    "SKILL://acme/tools/fill/SKILL.md",
    "skill:acme/tools/fill/SKILL.md",
    "skill://acme@evil/tools/fill/SKILL.md",
]


def test_lookalike_and_huge_uris(home: Path) -> None:
    todo = [
        (method, uri)
        for uri in LOOKALIKES
        for method in ("resources/read", "skills/get", "resources/directory/read")
    ]

    async def body(client: Client) -> list[Any]:
        ok = await sdk_request(client)("resources/read", {"uri": f"{FILL}/scripts/fill.py"})
        assert ok["contents"][0]["text"] == SCRIPT.decode()  # the control
        return await calls(client, todo)

    for (method, uri), result in zip(todo, drive(home, "legacy", body), strict=True):
        assert isinstance(result, MCPError), (method, uri[:80], str(result)[:200])
        assert result.error.code == types.INVALID_PARAMS, (method, uri[:80])
        assert len(json.dumps(result.error.model_dump())) < 4096, (method, uri[:80])


def test_disabled_and_removed_skills_are_not_served(home: Path, cli: CliRunner) -> None:
    """URIs that worked a moment ago stop working once the skill is disabled, then once the
    package is removed, through a server that keeps running (live reload)."""
    uris = [f"{FILL}/SKILL.md", f"{FILL}/scripts/fill.py", f"{FILL}/notes.md", FILL]

    def every(uri: str) -> list[tuple[str, str]]:
        return [(m, uri) for m in ("resources/read", "skills/get", "resources/directory/read")]

    todo = [c for u in uris for c in every(u)]

    async def body(client: Client) -> dict[str, Any]:
        send = sdk_request(client)
        before = await walk_all(send)
        assert f"{FILL}/SKILL.md" in before.entries
        cli("disable", "acme/tools/fill", check=True)
        disabled = await calls(client, todo)
        listing = await walk_all(send)
        author = await send("resources/directory/read", {"uri": "skill://acme/tools"})
        cli("remove", "acme/tools", check=True)
        removed = await calls(client, todo)
        gone = await walk_all(send)
        return {
            "disabled": disabled,
            "listing": listing,
            "author": author,
            "removed": removed,
            "gone": gone,
        }

    out = drive(home, "legacy", body)
    for phase in ("disabled", "removed"):
        for (method, uri), result in zip(todo, out[phase], strict=True):
            ok = isinstance(result, MCPError) and result.error.code == types.INVALID_PARAMS
            # skills/get and directory/read of the bare folder are -32602 too; only the
            # read of a folder URI was never valid.
            assert ok, (phase, method, uri, str(result)[:200])
    # A read of a disabled skill's file says why and how to enable it (as the tool does).
    reads = [i for i, (m, _) in enumerate(todo) if m == "resources/read"]
    said = [str(out["disabled"][i]) for i in reads]
    assert all("ontoskills enable acme/tools/fill" in x for x in said[:3]), said
    gone = [str(out["removed"][i]) for i in reads]
    assert not any("enable" in x for x in gone), gone
    assert f"{FILL}/SKILL.md" not in out["listing"].entries
    assert "skill://acme/tools/other/SKILL.md" in out["listing"].entries
    assert FILL + "/" not in json.dumps(out["author"])
    assert not any(k.startswith("skill://acme/") for k in out["gone"].entries)
    assert out["gone"].problems == []


def test_hostile_author_frontmatter_is_bounded_and_falls_back(home: Path) -> None:
    """A billion-laughs alias tree and a 20,000-deep list: the frontmatter reader gives up
    within its budget, SKILL.md is generated, and the authors' file is still served (byte
    for byte, as a reference) and verifies."""

    async def body(client: Client) -> Any:
        return await walk_all(sdk_request(client))

    result = drive(home, "legacy", body)
    assert result.problems == []
    for name in ("bomb", "deep"):
        entry = result.entries[f"skill://team/hostile/{name}/SKILL.md"]
        assert entry["frontmatter"]["name"] == name
        assert entry["frontmatter"]["metadata"]["ontoskills-key"] == f"team/hostile/{name}"
        paths = {r["uri"].rsplit(f"/{name}/", 1)[1] for r in entry["resources"]}
        assert "references/author-SKILL.md" in paths


@pytest.mark.parametrize(
    "data",
    [
        LAUGHS,
        b"---\nname: x\ndescription: y\nv: " + b"[" * 50_000 + b"\n---\n",
        b"---\nname: x\ndescription: y\npad: '"
        + b"a" * (authormd.MAX_FRONTMATTER + 1)
        + b"'\n---\n",
        b"---\nname: x\ndescription: \xff\xfe\n---\n",  # not UTF-8
        b"---\nname: x\ndescription: !!python/object/apply:os.system ['true']\n---\n",
        b"---\nname: x\ndescription: .nan\nv: .inf\n---\n",
        b"---\nname: x\ndescription: y\nv: !!binary aGVsbG8=\n---\n",
        b"---\n- name\n- x\n---\n",
        b"---\nname: x\ndescription: y\n" + b"k: &k [1]\n" + b"---",  # no closing newline: ok
        b"---\n&a [*a]\n---\n",  # a recursive alias
        b"---\nname: x\ndescription: y\n" + b"x" * 10_000_000,  # never closed, 10 MB
    ],
)
def test_frontmatter_reader_bounds(data: bytes) -> None:
    """Each is refused (None: SKILL.md is generated) or read within its bounds."""
    front = authormd.frontmatter_of(data, "x")
    if front is not None:
        assert front["name"] == "x" and isinstance(front["description"], str)
        assert len(json.dumps(front)) < authormd.MAX_FRONTMATTER * 4


def test_hidden_text_in_an_authors_skill_md_is_reported_at_install(
    cli: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """SKILL.md is served to agents byte for byte: invisible or bidi characters in it are a
    warning at install, as in Turtle and intents (an error with --strict, nothing kept)."""
    pkg = PackageSpec(
        id="team/sneaky",
        trust_tier="verified",
        skills=[SkillSpec("sneaky", "Format code")],
        assets={"sneaky/SKILL.md": (HIDDEN.encode(), False)},
    )
    registry = build_registry(tmp_path / "reg-hidden", [pkg])
    cli("registry", "add", "h", str(registry), check=True)
    strict = cli("--registry", "h", "install", "--strict", "team/sneaky")
    assert strict.returncode == 4, strict.stderr
    assert "SKILL.md" in strict.stderr and "U+202E" in strict.stderr
    assert not (Path(env["ONTOSKILLS_HOME"]) / "ontologies/author/team").exists()
    plain = cli("--registry", "h", "install", "team/sneaky")
    assert plain.returncode == 0, plain.stderr
    assert "sneaky/SKILL.md" in plain.stderr and "U+202E" in plain.stderr
