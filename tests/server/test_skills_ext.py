"""The Skills extension (SEP-2640) with real digests, through the SDK's own client in both
protocol eras, over homes installed by the real CLI: every file of every skill listed with
the lock's (or the served bytes') sha256 and size, read back and verified as a host must."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.shared.exceptions import MCPError

from ontoskills.catalog.skilldir import BODY_CHARS, frontmatter_text
from ontoskills.lockfile import load as read_lock
from ontoskills.server.app import ServeOptions
from tests.conftest import CliRunner
from tests.helpers.registry import PackageSpec, SkillSpec, build_registry
from tests.helpers.richskill import rich_package, sample_rich
from tests.helpers.skillhost import Walk, sdk_request, walk_all
from tests.server.test_inprocess import ERAS, drive

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"  # not UTF-8: served as a blob
AUTHOR_MD = b"---\nname: lint\ndescription: Lint the code\nlicense: MIT\nmetadata:\n  v: '2'\n---\n# Lint\nRun it.\n"  # noqa: E501
WRONG_MD = b"---\nname: someone-else\ndescription: Not this skill's name\n---\nbody\n"


def skill_packages(version: str = "1.0.0") -> list[PackageSpec]:
    docs = rich_package(sample_rich())
    docs.version = version
    docs.assets = {
        "pdf/scripts/fill.py": (b"print('fill')\n", True),
        "pdf/assets/logo.png": (PNG, False),
        "pdf/references/FORMS.md": (b"# Forms\n", False),  # the package uses references/
        "pdf/my notes (v2).txt": (b"spaces and parentheses\n", False),
    }
    mixed = PackageSpec(
        id="bench/mixed",
        trust_tier="verified",
        skills=[
            SkillSpec("image_editing", "Edit images: crop, rotate, resize"),
            SkillSpec("image-editing", "Edit images with the other tool"),
            SkillSpec("plain", "A plain small skill"),
        ],
    )
    authored = PackageSpec(
        id="team/authored",
        skills=[SkillSpec("lint", "Lint the code"), SkillSpec("bad", "A skill")],
        assets={"lint/SKILL.md": (AUTHOR_MD, False), "bad/SKILL.md": (WRONG_MD, False)},
    )
    return [docs, mixed, authored]


@pytest.fixture
def skills_home(cli: CliRunner, tmp_path: Path, env: dict[str, str]) -> Path:
    registry = build_registry(tmp_path / "skills-reg", skill_packages())
    cli("registry", "add", "skills", str(registry), check=True)
    cli("--registry", "skills", "install", "acme/docs", "bench/mixed", "team/authored", check=True)
    return Path(env["ONTOSKILLS_HOME"])


def walk(home: Path, mode: str = "legacy", options: ServeOptions | None = None) -> Walk:
    async def body(client: Client) -> Walk:
        return await walk_all(sdk_request(client))

    return drive(home, mode, body, options)


def request(
    home: Path,
    calls: list[tuple[str, dict[str, Any]]],
    mode: str = "legacy",
    options: ServeOptions | None = None,
) -> list[Any]:
    """Each call's result dict, or the MCPError it raised."""

    async def body(client: Client) -> list[Any]:
        send = sdk_request(client)
        out: list[Any] = []
        for method, params in calls:
            try:
                out.append(await send(method, params))
            except MCPError as exc:
                out.append(exc)
        return out

    return drive(home, mode, body, options)


@pytest.mark.parametrize("mode", ERAS)
def test_host_walk_verifies_every_byte_of_every_skill(skills_home: Path, mode: str) -> None:
    result = walk(skills_home, mode)
    assert result.problems == []
    uris = set(result.entries)
    assert uris == {
        "skill://acme/docs/pdf/SKILL.md",
        "skill://bench/mixed/image-editing/SKILL.md",
        "skill://bench/mixed/image-editing-2/SKILL.md",
        "skill://bench/mixed/plain/SKILL.md",
        "skill://team/authored/bad/SKILL.md",
        "skill://team/authored/lint/SKILL.md",
    }
    assert result.files == sum(len(e["resources"]) for e in result.entries.values())


def test_installed_files_carry_the_lock_hashes(skills_home: Path) -> None:
    entry = walk(skills_home).entries["skill://acme/docs/pdf/SKILL.md"]
    listed = {r["uri"]: r for r in entry["resources"]}
    lock = read_lock(skills_home / "ontoskills.lock")
    for f in lock.packages["acme/docs"].files:
        if f.path in ("package.json", "pdf/intents.json"):
            continue  # package metadata and search vectors are not skill files
        uri = "skill://acme/docs/pdf/" + f.path.removeprefix("pdf/")
        uri = uri.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        assert listed[uri] == {"uri": uri, "digest": f"sha256:{f.sha256}", "size": f.size}
    # The package's own references/ stays; generated parts go beside it.
    assert "skill://acme/docs/pdf/references/FORMS.md" in listed
    generated = [u for u in listed if "/references-generated/" in u]
    assert "skill://acme/docs/pdf/references-generated/knowledge.md" in generated
    assert "skill://acme/docs/pdf/references-generated/index.md" in generated


def test_generated_skill_md_links_its_parts_and_fits_the_size_guidance(skills_home: Path) -> None:
    uri = "skill://acme/docs/pdf/SKILL.md"
    (read,) = request(skills_home, [("resources/read", {"uri": uri})])
    text = read["contents"][0]["text"]
    front, body = text.split("---\n", 2)[1:]
    assert yaml.safe_load(front)["name"] == "pdf"
    assert len(body) <= BODY_CHARS + 100 and body.count("\n") < 500
    links = set(re.findall(r"\]\((<[^>]*>|[^)\s]*)\)", body))
    assert "references-generated/knowledge.md" in links
    assert "scripts/fill.py" in links and "<my notes (v2).txt>" in links
    # Every link is a listed file (the parts are the tool's: one split, two renderers).
    entry = walk(skills_home).entries[uri]
    listed = {r["uri"].removeprefix("skill://acme/docs/pdf/") for r in entry["resources"]}
    assert {quote(x.strip("<>")) for x in links} <= listed


def test_invalid_names_are_served_under_valid_ones_with_the_original_in_metadata(
    skills_home: Path,
) -> None:
    entries = walk(skills_home).entries
    renamed = entries["skill://bench/mixed/image-editing-2/SKILL.md"]["frontmatter"]
    assert renamed["name"] == "image-editing-2"
    assert renamed["metadata"]["original-name"] == "image_editing"
    assert renamed["metadata"]["ontoskills-key"] == "bench/mixed/image_editing"
    kept = entries["skill://bench/mixed/image-editing/SKILL.md"]["frontmatter"]
    assert kept["name"] == "image-editing" and "original-name" not in kept["metadata"]


def test_authors_skill_md_is_served_verbatim(skills_home: Path) -> None:
    uri = "skill://team/authored/lint/SKILL.md"
    entry, read = request(
        skills_home, [("skills/get", {"uri": uri}), ("resources/read", {"uri": uri})]
    )
    assert read["contents"][0]["text"].encode() == AUTHOR_MD
    assert entry["skill"]["frontmatter"] == {
        "name": "lint",
        "description": "Lint the code",
        "license": "MIT",
        "metadata": {"v": "2"},
    }
    (md,) = [r for r in entry["skill"]["resources"] if r["uri"] == uri]
    assert md["digest"] == "sha256:" + hashlib.sha256(AUTHOR_MD).hexdigest()
    # A SKILL.md that names another skill cannot be this one's: it moves beside the parts.
    bad = walk(skills_home).entries["skill://team/authored/bad/SKILL.md"]
    uris = {r["uri"] for r in bad["resources"]}
    assert "skill://team/authored/bad/references/author-SKILL.md" in uris
    assert bad["frontmatter"]["name"] == "bad"


def test_text_or_blob_by_type(skills_home: Path) -> None:
    root = "skill://acme/docs/pdf/"
    png, py = request(
        skills_home,
        [
            ("resources/read", {"uri": root + "assets/logo.png"}),
            ("resources/read", {"uri": root + "scripts/fill.py"}),
        ],
    )
    assert png["contents"][0]["mimeType"] == "image/png"
    assert base64.b64decode(png["contents"][0]["blob"]) == PNG
    assert py["contents"][0]["text"] == "print('fill')\n"
    assert py["contents"][0]["mimeType"] == "text/x-python"


def test_directory_read(skills_home: Path) -> None:
    root = "skill://acme/docs/pdf"
    calls = [
        ("resources/directory/read", {"uri": root}),
        ("resources/directory/read", {"uri": root + "/scripts"}),
        ("resources/directory/read", {"uri": "skill://acme/docs"}),
        ("resources/directory/read", {"uri": "skill://acme"}),
        ("resources/directory/read", {"uri": root + "/SKILL.md"}),
        ("resources/directory/read", {"uri": root + "/nope"}),
        ("resources/directory/read", {"uri": "skill://nobody/x"}),
        ("resources/read", {"uri": root + "/scripts"}),
        ("resources/read", {"uri": root + "/scripts/nope.py"}),
    ]
    top, scripts, package, author, not_dir, missing, nobody, read_dir, read_missing = request(
        skills_home, calls
    )
    kids = {r["name"]: r for r in top["resources"]}
    assert kids["scripts"]["mimeType"] == "inode/directory"
    assert kids["pdf"]["uri"] == f"{root}/SKILL.md" and kids["pdf"]["mimeType"] == "text/markdown"
    assert kids["references-generated"]["mimeType"] == "inode/directory"
    assert "ontoskill.ttl" in kids and "nextCursor" not in top
    assert [r["uri"] for r in scripts["resources"]] == [f"{root}/scripts/fill.py"]
    assert [r["uri"] for r in package["resources"]] == [root]
    assert [r["uri"] for r in author["resources"]] == ["skill://acme/docs"]
    for err in (not_dir, missing, nobody, read_dir, read_missing):
        assert isinstance(err, MCPError) and err.error.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", ERAS)
def test_capability_and_resources_list(skills_home: Path, mode: str) -> None:
    async def body(client: Client) -> tuple[Any, list[types.Resource]]:
        caps = client.server_capabilities
        return caps, (await client.list_resources()).resources

    caps, resources = drive(skills_home, mode, body)
    if mode == "auto":  # 2025 schemas have no `extensions` (the raw initialize carries it)
        assert caps.extensions["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    md = {str(r.uri): r for r in resources if str(r.uri).endswith("/SKILL.md")}
    assert len(md) == 6
    lint = md["skill://team/authored/lint/SKILL.md"]
    assert (lint.name, lint.description) == ("lint", "Lint the code")


def test_skills_get_and_cursor_errors(skills_home: Path) -> None:
    results = request(
        skills_home,
        [
            ("skills/get", {"uri": "skill://acme/docs/pdf/ontoskill.ttl"}),
            ("skills/get", {"uri": "skill://mcp-conformance-nonexistent/SKILL.md"}),
            ("skills/list", {"cursor": "not base64 at all!"}),
            ("resources/list", {"cursor": "-3"}),
        ],
    )
    for err in results:
        assert isinstance(err, MCPError) and err.error.code == types.INVALID_PARAMS


def test_pages_never_split_an_entry(skills_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ontoskills.server import skills_ext

    monkeypatch.setattr(skills_ext, "PAGE_SIZE", 4)
    result = walk(skills_home)
    assert result.pages == 2 and result.skills == 6 and result.problems == []


def test_bytes_do_not_depend_on_the_home(
    skills_home: Path, tmp_path: Path, cli: CliRunner, env: dict[str, str]
) -> None:
    first = walk(skills_home).entries
    other = tmp_path / "elsewhere" / "home"
    registry = tmp_path / "skills-reg"
    extra = {"ONTOSKILLS_HOME": str(other)}
    cli("registry", "add", "skills", str(registry), check=True, extra_env=extra)
    cli(
        "--registry", "skills", "install", "acme/docs", "bench/mixed", "team/authored",
        check=True, extra_env=extra,
    )  # fmt: skip
    assert walk(other).entries == first


def test_a_lock_change_changes_the_listing(
    skills_home: Path, tmp_path: Path, cli: CliRunner
) -> None:
    before = walk(skills_home).entries["skill://acme/docs/pdf/SKILL.md"]
    packages = skill_packages("1.1.0")
    packages[0].assets["pdf/scripts/fill.py"] = (b"print('fill v2')\n", True)
    registry = tmp_path / "skills-reg"
    shutil.rmtree(registry)
    build_registry(registry, packages)
    cli("update", "acme/docs", check=True)
    after = walk(skills_home)
    entry = after.entries["skill://acme/docs/pdf/SKILL.md"]
    assert after.problems == [] and entry != before
    digest = {r["uri"]: r["digest"] for r in entry["resources"]}
    old = {r["uri"]: r["digest"] for r in before["resources"]}
    script = "skill://acme/docs/pdf/scripts/fill.py"
    assert digest[script] == "sha256:" + hashlib.sha256(b"print('fill v2')\n").hexdigest()
    assert digest[script] != old[script]


def test_a_file_changed_on_disk_is_never_served(skills_home: Path) -> None:
    script = skills_home / "ontologies/author/acme/docs/pdf/scripts/fill.py"
    uri = "skill://acme/docs/pdf/scripts/fill.py"
    lock = (skills_home / "ontoskills.lock").read_bytes()

    async def body(client: Client) -> list[Any]:
        send = sdk_request(client)
        await send("skills/get", {"uri": "skill://acme/docs/pdf/SKILL.md"})
        out: list[Any] = []
        for tamper in (
            lambda: script.write_bytes(b"print('evil!')\n"),  # same size: the digest decides
            lambda: (script.unlink(), script.symlink_to(skills_home / "ontoskills.lock")),
        ):
            tamper()
            try:
                out.append(await send("resources/read", {"uri": uri}))
            except MCPError as exc:
                out.append(exc)
        return out

    changed, linked = drive(skills_home, "legacy", body)
    for err in (changed, linked):
        assert isinstance(err, MCPError) and err.error.code == types.INTERNAL_ERROR
    assert "changed on disk" in changed.error.message
    assert lock.decode()[:40] not in json.dumps(linked.error.model_dump())
    # A server started after the change does not list the file at all (verification).
    script.unlink()
    script.write_bytes(b"print('evil!')\n")
    entry = walk(skills_home).entries["skill://acme/docs/pdf/SKILL.md"]
    assert uri not in {r["uri"] for r in entry["resources"]}


def test_min_trust_hides_skills_from_the_extension(skills_home: Path) -> None:
    result = walk(skills_home, options=ServeOptions(min_trust="official"))
    assert set(result.entries) == {
        "skill://acme/docs/pdf/SKILL.md",
        "skill://team/authored/bad/SKILL.md",
        "skill://team/authored/lint/SKILL.md",
    }
    hidden = request(
        skills_home,
        [
            ("skills/get", {"uri": "skill://bench/mixed/plain/SKILL.md"}),
            ("resources/read", {"uri": "skill://bench/mixed/plain/ontoskill.ttl"}),
            ("resources/directory/read", {"uri": "skill://bench"}),
        ],
        options=ServeOptions(min_trust="official"),
    )
    for err in hidden:
        assert isinstance(err, MCPError) and err.error.code == types.INVALID_PARAMS


@pytest.mark.parametrize(
    "value",
    ["yes", "no", "on", "null", "1.0", "0o17", "- x", "a: b", "#c", "'q'", '"dq"', "é ü 中",
     "line\nbreak", "tab\there", "\u2028sep\u2029", "\x85nel", "\ufeffbom", "emoji 😀",
     "trailing ", "", "~", "@at", "`tick`", "*star", "&amp", "!bang", "%pct", "{}", "[1]"],
)  # fmt: skip
def test_frontmatter_reads_back_exactly(value: str) -> None:
    front = {"name": "x", "description": value, "metadata": {"k": value, value or "e": "v"}}
    text = frontmatter_text(front)
    assert yaml.safe_load(text.split("---\n")[1]) == front


def test_local_skills_are_hashed_from_disk_and_follow_edits(installed: Path) -> None:
    folder = installed / "ontologies/my-skills/release_notes"
    (folder / "templates").mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(
        "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix oc: <https://ontoskills.sh/ontology#> .\n"
        'oc:skill_local_notes a oc:Skill ; dcterms:identifier "release_notes" ;\n'
        '  oc:hasDescription "Write release notes" .\n'
    )
    template = folder / "templates/notes.md"
    template.write_bytes(b"# notes v1\n")
    uri = "skill://local/my-skills/release-notes/SKILL.md"  # the id breaks the naming rule
    file_uri = "skill://local/my-skills/release-notes/templates/notes.md"

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        send = sdk_request(client)
        first = (await send("skills/get", {"uri": uri}))["skill"]
        template.write_bytes(b"# notes v2, longer\n")  # a stat change: the catalog reloads
        second = (await send("skills/get", {"uri": uri}))["skill"]
        read = await send("resources/read", {"uri": file_uri})
        assert read["contents"][0]["text"] == "# notes v2, longer\n"
        return first, second

    first, second = drive(installed, "legacy", body)
    digests = [{r["uri"]: r["digest"] for r in e["resources"]} for e in (first, second)]
    assert digests[0][file_uri] == "sha256:" + hashlib.sha256(b"# notes v1\n").hexdigest()
    assert digests[1][file_uri] == "sha256:" + hashlib.sha256(b"# notes v2, longer\n").hexdigest()
    assert first["frontmatter"]["metadata"]["original-name"] == "release_notes"


def test_part_files_are_the_tools_parts(skills_home: Path) -> None:
    """One split, two renderers: every part a reader of the `ontoskill` tool is offered (the
    overview's parts, and the subsections a part lists by id instead of inlining them) is a
    generated file of the skill's directory, and a part that names no other holds the same
    text in both."""
    key = "acme/docs/pdf"
    root = "skill://acme/docs/pdf/references-generated/"

    async def body(client: Client) -> tuple[dict[str, str], dict[str, str]]:
        send = sdk_request(client)

        async def tool(q: str) -> dict[str, Any]:
            return await send("tools/call", {"name": "ontoskill", "arguments": {"q": q}})

        overview = await tool(key)
        assert not overview["structuredContent"]["complete"]
        todo = [p["id"] for p in overview["structuredContent"]["parts"]]
        answers: dict[str, str] = {}
        while todo:
            pid = todo.pop()
            if pid in answers:
                continue
            answer = await tool(f"{key}#{pid}")
            assert answer["structuredContent"]["pages"] == 1  # the fixture's parts fit a page
            answers[pid] = answer["content"][0]["text"]
            if pid != "index":  # the index names every nested part; others list theirs
                todo += re.findall(r"`#([a-z0-9-]+)`", answers[pid])
        entry = (await send("skills/get", {"uri": f"skill://{key}/SKILL.md"}))["skill"]
        files = {}
        for r in entry["resources"]:
            if r["uri"].startswith(root):
                read = await send("resources/read", {"uri": r["uri"]})
                files[r["uri"].removeprefix(root).removesuffix(".md")] = read["contents"][0]["text"]
        return answers, files

    answers, files = drive(skills_home, "legacy", body)
    assert len(answers) >= 10 and set(files) == set(answers)
    same = 0
    for pid, text in answers.items():
        header, _, rest = text.partition("\n\n")
        assert header.startswith(f"{key}#{pid}"), header
        rest = re.sub(r"\n+end of #[^\n]*\s*$", "", rest)  # the tool's "where next" line
        # Parts that name files or other parts differ in how: absolute paths and `#id` in
        # the tool, links relative to the skill in the directory (bytes free of the home).
        if pid not in ("about", "index") and "`#" not in rest:
            assert files[pid].strip() == rest.strip(), pid
            same += 1
    assert same >= len(answers) // 2
