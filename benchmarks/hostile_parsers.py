"""Hostile inputs for every parser and untrusted stream (issue 22, classes 4 and 5): exit code,
wall time and peak RSS of the real CLI on each, so a run on the old code and one on the new
give the before -> after figures in docs/RELIABILITY.md.

    python benchmarks/hostile_parsers.py [--cases lock-deep,stdio-line] [--line-mb 300] [--code DIR]

Each case runs `ontoskills` in a fresh subprocess under /usr/bin/time (peak RSS of that
process); the stdio cases start `serve`, send one hostile line, then a `ping`, and report
whether the server answered it (it must keep serving).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
Result = tuple[int, float, int, str]  # exit code, wall seconds, peak RSS MB, what it said
CODE = REPO  # --code: the tree whose `ontoskills` runs (an export of the old code: before)
DEEP = 3000
LINE_MB = 300
CAP_BYTES = 6 << 30  # address-space cap of every child: a blow-up ends in MemoryError, not OOM


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def _env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ONTOSKILLS_HOME": str(root / "home"),
        "ONTOSKILLS_CACHE_DIR": str(root / "cache"),
        "HOME": str(root / "user"),
        "XDG_CONFIG_HOME": str(root / "user" / ".config"),
        "PYTHONPATH": str(CODE),
        "NO_COLOR": "1",
        "CI": "true",
    }


def _timed(root: Path, *args: str) -> Result:
    """(exit code, seconds, peak RSS in MB, last stderr line) of one CLI run."""
    cmd = ["/usr/bin/time", "-f", "RSS_KB=%M", sys.executable, "-m", "ontoskills", *args]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd,
        env=_env(root),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=_cap,
        cwd=root,  # `-m` puts the working folder first on sys.path: only --code may win
    )
    wall = time.perf_counter() - start
    lines = proc.stderr.strip().splitlines()
    rss = int(next(x for x in reversed(lines) if x.startswith("RSS_KB=")).split("=")[1])
    said = next((x for x in lines if x.startswith("error:")), "")
    return proc.returncode, wall, rss // 1024, said[:110]


def _deep_array() -> str:
    return "[" * DEEP + "]" * DEEP


def lock_deep(root: Path) -> Result:
    (root / "deep.lock").write_text(f"lock_version = 1\nx = {_deep_array()}\n")
    return _timed(root, "--lockfile", str(root / "deep.lock"), "list")


def config_deep(root: Path) -> Result:
    (root / "home").mkdir(parents=True, exist_ok=True)
    (root / "home" / "config.toml").write_text(f"x = {_deep_array()}\n")
    return _timed(root, "list")


def goose_deep(root: Path) -> Result:
    conf = root / "user" / ".config" / "goose"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "config.yaml").write_text(f"extensions: {_deep_array()}\n")
    return _timed(root, "mcp-config", "--client", "goose")


def codex_deep(root: Path) -> Result:
    conf = root / "proj" / ".codex"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "config.toml").write_text(f"x = {_deep_array()}\n")
    return _timed(root, "mcp-config", "--client", "codex", "--project", "--dir", str(root / "proj"))


def _skill_md(root: Path, front: str, body: str = "Body.\n") -> Path:
    src = root / "src" / "s1"
    src.mkdir(parents=True, exist_ok=True)
    (src / "SKILL.md").write_text(f"---\n{front}\n---\n{body}")
    return root / "src"


def skillmd_deep(root: Path) -> Result:
    src = _skill_md(root, f"name: s1\ndescription: d\nintents: {_deep_array()}")
    return _timed(root, "pack", str(src), "--from-skill-md", "--id", "acme/p")


def skillmd_aliases(root: Path, count: int = 20_000, size: int = 100_000) -> Result:
    """A "billion laughs": one 100 KB scalar, referenced `count` times in `intents`."""
    aliases = ", ".join(["*a"] * count)
    front = f"name: s1\ndescription: d\nx: &a {'y' * size}\nintents: [{aliases}]"
    src = _skill_md(root, front)
    return _timed(root, "pack", str(src), "--from-skill-md", "--id", "acme/p")


def skillmd_aliases_2k(root: Path) -> Result:
    return skillmd_aliases(root, 2_000)


def skillmd_aliases_fit(root: Path) -> Result:
    """10,000 aliases of a 2 KB scalar: 42 KB of frontmatter, inside its 64 KiB bound."""
    return skillmd_aliases(root, 10_000, 2_000)


def skillmd_sparse(root: Path) -> Result:
    """A 1 GiB sparse SKILL.md: costs no disk, but whatever reads it whole holds 1 GiB."""
    src = _skill_md(root, "name: s1\ndescription: d")
    with open(src / "s1" / "SKILL.md", "r+b") as fh:
        fh.truncate(1 << 30)
    return _timed(root, "pack", str(src), "--from-skill-md", "--id", "acme/p")


def lock_url(root: Path, length: int = 64 * 1024) -> Result:
    url = "https://example.com/" + "a" * length
    (root / "url.lock").write_text(
        'lock_version = 1\n[registries.r]\nkind = "http"\n'
        f'url = "{url}"\n[packages."acme/x"]\nversion = "1.0.0"\nregistry = "r"\n'
        'trust_tier = "community"\nrequested = ["acme/x"]\nroot = "packages/acme/x"\n'
        '[[packages."acme/x".files]]\npath = "a.ttl"\n'
        f'sha256 = "{"0" * 64}"\nsize = 1\nexecutable = false\n'
    )
    return _timed(root, "--lockfile", str(root / "url.lock"), "lock", "export")


def _serve_one_line(root: Path, write_line: Callable[[subprocess.Popen[bytes]], None]) -> Result:
    """Start serve, initialize, send the hostile line, then a ping: (exit, s, MB, outcome)."""
    cmd = ["/usr/bin/time", "-f", "RSS_KB=%M", sys.executable, "-m", "ontoskills", "serve"]
    proc = subprocess.Popen(
        cmd,
        env=_env(root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_cap,
        cwd=root,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    start = time.perf_counter()
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    replies: list[dict[str, object]] = []
    try:
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        replies.append(json.loads(proc.stdout.readline()))
        write_line(proc)
        proc.stdin.write(b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n')
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                break
            replies.append(json.loads(line))
            if replies[-1].get("id") == 99:
                break
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    proc.wait(timeout=120)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace").strip().splitlines()
    rss = int(next(x for x in reversed(err) if x.startswith("RSS_KB=")).split("=")[1])
    answers = [_brief(r) for r in replies[1:]]
    pinged = any(r.get("id") == 99 for r in replies)
    outcome = f"replies {answers}; {'kept serving' if pinged else 'DIED or no ping answer'}"
    return proc.returncode, wall, rss // 1024, outcome


def _brief(reply: dict[str, object]) -> str:
    error = reply.get("error")
    code = error.get("code") if isinstance(error, dict) else "result"
    return f"id {reply.get('id')}: {code}"


def _send(data: bytes) -> Callable[[subprocess.Popen[bytes]], None]:
    def write(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.flush()

    return write


def stdio_line(root: Path) -> Result:
    """One request line of --line-mb MB (a string parameter), written in 1 MB pieces."""
    megabytes = LINE_MB

    def write(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":"')
        piece = b"x" * (1 << 20)
        for _ in range(megabytes):
            proc.stdin.write(piece)
        proc.stdin.write(b'"}}\n')
        proc.stdin.flush()

    return _serve_one_line(root, write)


def stdio_deep_surrogate(root: Path) -> Result:
    deep = "[" * DEEP + '"\\ud800"' + "]" * DEEP
    line = '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":' + deep + "}}\n"
    return _serve_one_line(root, _send(line.encode()))


def stdio_id_inf(root: Path) -> Result:
    return _serve_one_line(root, _send(b'{"jsonrpc":"2.0","id":1e999999,"method":"ping"}\n'))


CASES: dict[str, Callable[[Path], tuple[int, float, int, str]]] = {
    "lock-deep": lock_deep,
    "config-deep": config_deep,
    "goose-deep": goose_deep,
    "codex-deep": codex_deep,
    "skillmd-deep": skillmd_deep,
    "skillmd-aliases-2k": skillmd_aliases_2k,
    "skillmd-aliases": skillmd_aliases,
    "skillmd-aliases-fit": skillmd_aliases_fit,
    "skillmd-sparse-1g": skillmd_sparse,
    "lock-url-64k": lock_url,
    "stdio-deep-surrogate": stdio_deep_surrogate,
    "stdio-id-inf": stdio_id_inf,
    "stdio-line": stdio_line,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--line-mb", type=int, default=300)
    parser.add_argument("--code", type=Path, default=REPO, help="the tree holding ontoskills/")
    args = parser.parse_args()
    global CODE, LINE_MB
    CODE, LINE_MB = args.code.resolve(), args.line_mb
    print("| case | exit | wall s | peak RSS MB | outcome |")
    print("|---|---|---|---|---|")
    for name in args.cases.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            code, wall, rss, said = CASES[name](Path(tmp))
        print(f"| {name} | {code} | {wall:.2f} | {rss} | {said} |", flush=True)


if __name__ == "__main__":
    main()
