"""No import cycle between ontoskills' packages and top-level modules (issue 14 item 4).

config.py imported `sources.detect_kind` while every source imported `config.RegistryConfig`;
both now come from `registries.py`. Lazy imports inside functions count too: a cycle that
only works because one side imports late is still two modules that cannot be understood,
tested or moved apart. (docs/ARCHITECTURE.md states the layering; this test keeps the part
of it that a cycle would break.)
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ontoskills"


def _unit(module: str) -> str:
    """`ontoskills.sources.http` -> `sources`; `ontoskills.config` -> `config`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> set[str]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    module = ".".join(rel.parts).removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
                # `from . import x` names a module of that package
                out.update(f"{target}.{a.name}" for a in node.names)
            else:
                target = node.module or ""
            out.add(target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {t for t in out if t.startswith("ontoskills.")}


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        src = _unit(".".join(rel.parts))
        for target in _imports(path):
            dst = _unit(target)
            if src and dst and src != dst:
                graph.setdefault(src, set()).add(dst)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_finder_sees_a_cycle() -> None:
    assert cycles({"config": {"sources"}, "sources": {"config"}}) == [["config", "sources"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_config_and_sources_share_registries_not_each_other() -> None:
    graph = package_graph()
    assert "sources" not in graph.get("config", set())
    assert "config" not in graph.get("sources", set())
    assert "registries" in graph["config"] and "registries" in graph["sources"]


def test_no_import_cycle_between_packages() -> None:
    assert cycles(package_graph()) == []
