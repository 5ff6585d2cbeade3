"""Issue 22 (third hardening round): class 7, class 8 and a session's GET stream.

Class 7, no work super-linear in catalog content. Work is counted, never timed: the
dependency closure's peak memory (a list refilled with every dependency of every skill held
E entries), how often the catalog asks who owns a file, how much merging a skill's
sub-modules costs, how many intents a search tokenizes, how many skills a page of the Skills
extension looks at. The cap on intents per skill is checked by what the catalog keeps.
Timings (before -> after, same inputs) are in docs/RELIABILITY.md.

Class 8, registry location errors name the registry: a file, /dev/null, /dev/zero, a FIFO,
a socket, a folder without index.json, an HTTP site answering HTML, through `install`, `ci`
(a lock naming it), `registry add`, `outdated` and `publish --registry`: exit 2 or 7 naming
the registry, never 1 with a hint about --home, never 4 blaming its maintainers.

Also: concurrent GET streams of the Streamable HTTP server are capped (`[serve]
max_streams`); past the cap a GET is refused with 503 and a JSON-RPC error body.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer

from ontoskills import limits
from ontoskills.catalog import loader
from ontoskills.config import load_config
from ontoskills.errors import ConfigError
from ontoskills.install.resolve import select_skills
from ontoskills.manifest import Manifest, parse_manifest
from ontoskills.paths import Home
from ontoskills.search import documents
from ontoskills.search.service import SkillService
from tests.conftest import REPO, CliRunner
from tests.helpers.httpserve import HttpServer, RawSession
from tests.helpers.registry import (
    OC,
    PackageSpec,
    SkillSpec,
    build_registry,
    intents_json,
    skill_turtle,
    write_package,
)

# ------------------------------------------------------------------ class 7: closures


def _clique(n: int) -> Manifest:
    """n skills, each depending on all n: E = n^2 dependencies."""
    ids = [f"s{i}" for i in range(n)]
    skills = [SkillSpec(s, depends=tuple(ids), vectors=False) for s in ids]
    return _manifest(PackageSpec(id="acme/clique", skills=skills))


def _manifest(spec: PackageSpec) -> Manifest:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        write_package(Path(tmp), spec)
        data = (Path(tmp) / "packages" / spec.id / "package.json").read_bytes()
    return parse_manifest(data, source="package.json")


def test_dependency_closure_holds_each_skill_once() -> None:
    """`install pkg/s0` of 300 skills x 300 dependencies: the old queue (a list popped from
    the front, refilled with every dependency of every skill) peaked at ~800 KB and cost
    O(E^2) moves; a deque with a visited set holds at most one entry per skill."""
    manifest = _clique(300)
    tracemalloc.start()
    try:
        chosen, unresolved = select_skills(manifest, {"s0"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [s.id for s in chosen] == sorted(f"s{i}" for i in range(300))
    assert unresolved == []
    assert peak < 200_000, f"the closure peaked at {peak} bytes for 300 skills"


def test_dependency_closure_follows_chains_and_reports_each_missing_dependency_once() -> None:
    spec = PackageSpec(
        id="acme/chain",
        skills=[
            SkillSpec("a", depends=("b", "gone")),
            SkillSpec("b", depends=("c", "gone", "lost")),
            SkillSpec("c", depends=("a",)),
            SkillSpec("d"),
        ],
    )
    chosen, unresolved = select_skills(_manifest(spec), {"a"})
    assert [s.id for s in chosen] == ["a", "b", "c"]
    assert unresolved == ["a -> gone", "b -> lost"]


def test_unresolved_dependencies_are_one_warning_line(
    cli_inproc: CliRunner, tmp_path: Path
) -> None:
    """A skill naming 40 dependencies the package lacks: one line naming ten and the count,
    not 40 lines (a hostile manifest can name a million)."""
    missing = tuple(f"gone{i:02d}" for i in range(40))
    reg = build_registry(
        tmp_path / "reg", [PackageSpec(id="acme/deps", skills=[SkillSpec("a", depends=missing)])]
    )
    proc = cli_inproc("--registry", str(reg), "install", "acme/deps/a", check=True)
    lines = [ln for ln in proc.stderr.splitlines() if "dependenc" in ln]
    assert len(lines) == 1, proc.stderr
    assert "a -> gone00" in lines[0] and "(+30 more)" in lines[0]


# ------------------------------------------------------------------ class 7: the catalog


def _home(cli: CliRunner, tmp_path: Path, env: dict[str, str], pkgs: list[PackageSpec]) -> Home:
    reg = build_registry(tmp_path / "reg", pkgs)
    cli("--registry", str(reg), "install", *[p.id for p in pkgs], check=True)
    return Home(Path(env["ONTOSKILLS_HOME"]))


def _service(home: Home) -> SkillService:
    return SkillService(home, home.default_lockfile, load_config(home.config_file), verify="none")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, str], list[int]]:
    """Count the calls of `owner.name` (the real function still runs)."""

    def spy(owner: Any, name: str) -> list[int]:
        calls = [0]
        real = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)
        return calls

    return spy


def test_catalog_asks_each_files_owner_once(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str], counted: Any
) -> None:
    """60 skills with 3 assets each (241 files): every file's owner was asked once per
    skill (~15,000 calls; 2,400 skills x 4 files took 33 s); now once per file."""
    skills = [SkillSpec(f"s{i}", f"skill {i}", vectors=False) for i in range(60)]
    assets = {f"s{i}/a{j}.md": (b"x\n", False) for i in range(60) for j in range(3)}
    home = _home(cli_inproc, tmp_path, env, [PackageSpec("acme/wide", skills, assets=assets)])
    calls = counted(Manifest, "owner_of")
    service = _service(home)
    files = len(service.state.data.records) * 4 + 1
    assert calls[0] <= files, f"{calls[0]} owner lookups for {files} files"
    rec = next(r for r in service.state.data.records if r.key == "acme/wide/s7")
    assert rec.assets == [f"s7/a{j}.md" for j in range(3)]


def test_sub_modules_are_merged_once_per_skill(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One skill with 200 sub-modules, an intent and an alias each: merging them one module
    at a time rebuilt the growing lists 200 times (~40,000 items); now one merge each."""
    subs = {
        f"big/sub{i}.ttl": f"@prefix oc: <{OC}> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        f'oc:sub{i} a oc:Skill ; dcterms:identifier "sub{i}" ; '
        f'oc:resolvesIntent "sub intent {i}" ; oc:hasAlias "alias{i}" .\n'
        for i in range(200)
    }
    spec = PackageSpec("acme/subs", [SkillSpec("big", intents=("do big",), extra_modules=subs)])
    home = _home(cli_inproc, tmp_path, env, [spec])
    work = [0]
    real = loader.merge

    def merge(a: list[str], b: list[str]) -> list[str]:
        work[0] += len(a) + len(b)
        return real(a, b)

    monkeypatch.setattr(loader, "merge", merge)
    (rec,) = _service(home).state.data.records
    assert len(rec.intents) == 201 and len(rec.aliases) == 200
    assert work[0] <= 4 * 201, f"merging 200 sub-modules touched {work[0]} items"


def _many_intents(n: int) -> PackageSpec:
    intents = tuple(f"deploy the widget number {i}" for i in range(n))
    return PackageSpec(
        "acme/intents",
        [
            SkillSpec("huge", "Handles widgets", intents=intents),
            *[SkillSpec(f"small{i}", f"Small widget skill {i}", vectors=False) for i in range(3)],
        ],
    )


def test_intents_are_capped_per_skill_text_and_vectors_alike(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]
) -> None:
    """3,000 intents, in an installed package (manifest + Turtle) and in a local skill with
    an intents.json of 3,000 vectors: the catalog indexes the first
    limits.MAX_INTENTS_PER_SKILL, vectors only for those, and says so once per skill."""
    cap = limits.MAX_INTENTS_PER_SKILL
    home = _home(cli_inproc, tmp_path, env, [_many_intents(3 * cap)])
    local = _many_intents(3 * cap).skills[0]
    folder = home.ontologies / "mine" / "huge"
    folder.mkdir(parents=True)
    (folder / "ontoskill.ttl").write_text(skill_turtle("mine/huge", local))
    vectors = intents_json(local, PackageSpec("mine/huge", [local]))
    (folder / "intents.json").write_text(json.dumps(vectors))
    data = _service(home).state.data
    for key in ("acme/intents/huge", "local/mine/huge"):
        idx = next(i for i, r in enumerate(data.records) if r.key == key)
        kept = data.records[idx].intents
        assert len(kept) == cap, key
        said = [p for p in data.problems if p.startswith(key)]
        assert len(said) == 1 and f"{3 * cap} intents" in said[0], data.problems
    owner = data.vector_owner.tolist()
    rows = [t for o, t in zip(owner, data.vector_text, strict=True) if o == idx]
    assert len(rows) == cap and set(rows) == set(kept)
    proc = cli_inproc("search", "deploy widget", "--mode", "bm25", "--json", check=True)
    assert json.loads(proc.stdout)["results"][0]["skill"] in ("acme/intents/huge", key)


def test_a_search_tokenizes_no_intent(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str], counted: Any
) -> None:
    """Intents are tokenized when the index is built and kept in the snapshot: a search
    (in a process that read the snapshot) tokenizes none, however many a hit has."""
    home = _home(cli_inproc, tmp_path, env, [_many_intents(500)])
    _service(home)  # builds and saves the snapshot
    service = _service(home)  # reads it back, as every `search` process does
    calls = counted(documents, "tokenize")  # where intents are tokenized (IntentIndex)
    answer = service.search("deploy widget number 7", mode="bm25")
    assert answer.results[0].skill == "acme/intents/huge"
    assert answer.results[0].matched_intents[0] == "deploy the widget number 7"
    assert calls[0] == 0, f"{calls[0]} intents tokenized by one search"


def test_a_skills_listing_looks_at_each_skill_once(
    cli_inproc: CliRunner,
    tmp_path: Path,
    env: dict[str, str],
    counted: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """skills/list pages: every page sorted and filtered the whole catalog again (pages x
    skills) and found its cursor by a scan; now once per catalog view."""
    from ontoskills.server import skills_ext
    from ontoskills.server.skillfs import SkillFS
    from tests.helpers.skillhost import sdk_request
    from tests.server.test_inprocess import drive

    skills = [SkillSpec(f"s{i:02d}", f"skill {i}", vectors=False) for i in range(40)]
    home = _home(cli_inproc, tmp_path, env, [PackageSpec("acme/many", skills)])
    monkeypatch.setattr(skills_ext, "PAGE_SIZE", 4)
    calls = counted(SkillFS, "visible")

    async def body(client: Any) -> list[str]:
        request, cursor, seen = sdk_request(client), None, []
        while True:
            page = await request("skills/list", {"cursor": cursor} if cursor else {})
            seen += [s["uri"] for s in page["skills"]]
            cursor = page.get("nextCursor")
            if not cursor:
                return seen

    seen = drive(home.root, "legacy", body)
    assert len(seen) == len(set(seen)) == 40
    assert calls[0] <= 2 * 40, f"{calls[0]} visibility checks to list 40 skills"


# ------------------------------------------------------------------ also: GET streams


async def _get_stream(url: str, session: RawSession) -> tuple[int, bytes, Any]:
    """Open a session's GET event stream on its own connection: (status, body when it is
    not a stream, the open writer to close it)."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        f"Mcp-Session-Id: {session.session_id}\r\nMcp-Protocol-Version: {session.version}"
        "\r\n\r\n".encode()
    )
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    status = int(head.split(" ", 2)[1])
    body = b""
    length = re.search(r"(?im)^content-length:\s*(\d+)", head)
    if status != 200 and length:
        body = await reader.readexactly(int(length.group(1)))
    return status, body, writer


def test_get_streams_past_the_cap_are_refused_and_below_it_served(
    env: dict[str, str], tmp_path: Path
) -> None:
    """`[serve] max_streams = 2`: two sessions hold a GET stream each; a third GET is 503
    with a JSON-RPC error body (its session still answers POSTs); once a stream closes, a
    new one is served. Before, every GET was held open (~57 KB each, and a descriptor)."""
    home = Path(env["ONTOSKILLS_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[serve]\nmax_streams = 2\n")

    async def body(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            sessions = [RawSession(client, url) for _ in range(3)]
            for s in sessions:
                await s.open()
            held = []
            for s in sessions[:2]:
                status, _, writer = await _get_stream(url, s)
                assert status == 200
                held.append(writer)
            status, refused, writer = await _get_stream(url, sessions[2])
            writer.close()
            assert status == 503
            error = json.loads(refused)
            assert error["jsonrpc"] == "2.0" and error["id"] is None
            assert error["error"]["code"] == -32603
            assert "Too many open event streams" in error["error"]["message"]
            assert (await sessions[2].request("ping"))["result"] == {}
            held.pop().close()  # one stream ends: room for another
            for _ in range(200):
                status, _, writer = await _get_stream(url, sessions[2])
                if status == 200:
                    break
                writer.close()
                await asyncio.sleep(0.05)
            assert status == 200
            writer.close()
            for w in held:
                w.close()

    with HttpServer({**os.environ, **env, "PYTHONPATH": str(REPO)}) as server:
        asyncio.run(body(server.url))
        assert "refused a GET event stream" in server.stderr
        assert server.stop() == 0


@pytest.mark.parametrize("value", ["-1", "100001", "true", '"8"', "2.5"])
def test_max_streams_out_of_range_is_a_config_error(tmp_path: Path, value: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[serve]\nmax_streams = {value}\n")
    with pytest.raises(ConfigError, match=r"serve\.max_streams must be an integer from 0"):
        load_config(path)
    path.write_text("[serve]\nmax_streams = 0\n")
    assert load_config(path).serve.max_streams == 0


# ------------------------------------------------------------------ class 8: locations

LOCAL_SHAPES = ["file", "dev-null", "dev-zero", "fifo", "socket", "empty", "no-index", "index-dir"]
HTTP_SHAPES = ["html", "http-404"]


@pytest.fixture
def shape_of(tmp_path: Path, httpserver: HTTPServer) -> Iterator[Callable[[str], str]]:
    """A location of each shape that is not a registry."""
    held: list[socket.socket] = []
    httpserver.expect_request(re.compile("^/html/.*")).respond_with_data(
        "<!doctype html><html><body>Welcome</body></html>", content_type="text/html"
    )
    httpserver.expect_request(re.compile("^/missing/.*")).respond_with_data("gone", status=404)

    def make(shape: str) -> str:
        where = tmp_path / "shapes" / shape
        where.parent.mkdir(exist_ok=True)
        if shape == "file":
            where.write_text("hello\n")
        elif shape in ("dev-null", "dev-zero"):
            return "/dev/" + shape[4:]
        elif shape == "fifo":
            os.mkfifo(where)
        elif shape == "socket":
            s = socket.socket(socket.AF_UNIX)
            s.bind(str(where))
            held.append(s)
        elif shape == "empty":
            where.mkdir()
        elif shape == "no-index":
            where.mkdir()
            (where / "README.md").write_text("not a registry\n")
        elif shape == "index-dir":
            (where / "index.json").mkdir(parents=True)
        elif shape == "html":
            return httpserver.url_for("/html/")
        elif shape == "http-404":
            return httpserver.url_for("/missing/")
        return str(where)

    yield make
    for s in held:
        s.close()


def _refused(proc: Any, name: str | None, where: str) -> None:
    """Exit 2 or 7, one `error:` line naming the registry and its location; nothing about
    --home (exit 1) and no blame on a registry's maintainers (exit 4)."""
    assert proc.returncode in (2, 7), (proc.returncode, proc.stderr)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    shown = where.split("//", 1)[-1]
    host, _, path = shown.partition("/")
    assert host.split(":")[0] in errors[0] and path in errors[0], proc.stderr
    if name is not None:
        assert f"registry {name} " in errors[0], proc.stderr
    assert "--home" not in proc.stderr and "maintainers" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("shape", LOCAL_SHAPES + HTTP_SHAPES)
def test_install_from_a_location_that_is_not_a_registry(
    cli_inproc: CliRunner, shape_of: Callable[[str], str], shape: str
) -> None:
    where = shape_of(shape)
    proc = cli_inproc("--registry", where, "install", "acme/x")
    _refused(proc, None, where)


@pytest.mark.parametrize("shape", LOCAL_SHAPES)
def test_registry_add_refuses_a_local_location_that_is_not_a_registry(
    cli_inproc: CliRunner, shape_of: Callable[[str], str], env: dict[str, str], shape: str
) -> None:
    """Checked offline, by stat() only (a URL is checked on its first read: `add` never
    needs the network). Nothing is written to config.toml."""
    where = shape_of(shape)
    proc = cli_inproc("registry", "add", "corp", where)
    _refused(proc, "corp", where)
    assert not (Path(env["ONTOSKILLS_HOME"]) / "config.toml").exists()


@pytest.fixture
def locked_home(
    cli_inproc: CliRunner, tmp_path: Path, env: dict[str, str]
) -> Callable[[str], Path]:
    """acme/x installed from a good folder registry; then the lock names `where` instead."""
    reg = build_registry(tmp_path / "good", [PackageSpec("acme/x", [SkillSpec("s", "a skill")])])
    cli_inproc("--registry", str(reg), "install", "acme/x", check=True)
    home = Path(env["ONTOSKILLS_HOME"])

    def point_at(where: str) -> Path:
        lock = home / "ontoskills.lock"
        text = re.sub(r'(?m)^url = ".*"$', f"url = {json.dumps(where)}", lock.read_text())
        if "://" in where:
            text = text.replace('kind = "folder"', 'kind = "http"')
        lock.write_text(text)
        return home

    return point_at


@pytest.mark.parametrize("verb", ["ci", "outdated"])
@pytest.mark.parametrize("shape", LOCAL_SHAPES + HTTP_SHAPES)
def test_a_lock_naming_a_location_that_is_not_a_registry(
    cli_inproc: CliRunner,
    shape_of: Callable[[str], str],
    locked_home: Callable[[str], Path],
    shape: str,
    verb: str,
    env: dict[str, str],
) -> None:
    """`ci` (the tree and the store gone, so it must fetch) and `outdated`: the lock's
    registry `good` named with the location, never a package "removed from the registry"
    (exit 0) or a file "tampered" (exit 4)."""
    where = shape_of(shape)
    home = locked_home(where)
    if verb == "ci":
        shutil.rmtree(home / "ontologies")
        shutil.rmtree(env["ONTOSKILLS_CACHE_DIR"])  # the verified store would restore it
    proc = cli_inproc(verb)
    _refused(proc, "good", where)


@pytest.mark.parametrize("shape", ["file", "dev-null", "dev-zero", "fifo", "socket", "html"])
def test_publish_into_a_location_that_is_not_a_registry(
    cli_inproc: CliRunner, shape_of: Callable[[str], str], tmp_path: Path, shape: str
) -> None:
    """Not a git clone of /dev/zero failing as a network error (exit 5): exit 2."""
    spec = PackageSpec("acme/y", [SkillSpec("t", vectors=False)], files_array=True)
    write_package(tmp_path / "src", spec)
    where = shape_of(shape)
    proc = cli_inproc("publish", str(tmp_path / "src/packages/acme/y"), "--registry", where)
    _refused(proc, None, where)
    assert proc.returncode == 2
