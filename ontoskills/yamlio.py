"""The one reader of YAML: SKILL.md frontmatter (`pack --from-skill-md`, the served SKILL.md)
and goose's config.yaml, bounded while it is composed, every failure mapped to the caller's
error (its exit code: 4 for a SKILL.md or a client file).

PyYAML's composer recurses once per nested node, so a few hundred levels end in
RecursionError ("internal error", exit 1). And an alias is a reference: 20,000 `*a` to one
100 KB scalar parse from 200 KB of text into a value whose every reader (Turtle for `pack`,
JSON for the server) sees 2 GB: YAML's "billion laughs". The loader here counts while it
composes, before the constructor or any caller sees a value: the depth of every node (an
alias adds the height of what it names) and the nodes and scalar characters the document
stands for once every alias is expanded. Aliases are allowed within that budget (a SKILL.md
may share a list), recursive ones never (no reader of ours can walk a cycle). The size is
checked before parsing; PyYAML's pure-Python loader is used (never libyaml's C one, whose
recursion is the C stack's).
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import OntoskillsError

MAX_DEPTH = 64
MAX_NODES = 100_000  # a goose config or a frontmatter holds tens to hundreds


class _Refused(Exception):
    pass


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses depth, node and character budgets as it composes."""

    def __init__(self, text: str, max_depth: int, max_nodes: int, max_chars: int) -> None:
        super().__init__(text)
        self._max = (max_depth, max_nodes, max_chars)
        self._depth = 0
        self._deepest = 0  # deepest level reached inside the node being composed
        self._nodes = 0
        self._chars = 0
        # per anchor: (nodes, characters, height) of its node, aliases inside expanded
        self._cost: dict[str, tuple[int, int, int]] = {}

    def _spend(self, nodes: int, chars: int) -> None:
        self._nodes += nodes
        self._chars += chars
        if self._nodes > self._max[1]:
            raise _Refused(f"more than {self._max[1]} values once its aliases are expanded")
        if self._chars > self._max[2]:
            raise _Refused(f"more than {self._max[2]} characters once its aliases are expanded")

    def _reach(self, depth: int) -> None:
        if depth > self._max[0]:
            raise _Refused(f"nested deeper than {self._max[0]} levels")
        self._deepest = max(self._deepest, depth)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor
            if anchor in self.anchors and anchor not in self._cost:
                raise _Refused(f"the alias *{anchor} refers to a node that contains it")
            nodes, chars, height = self._cost.get(anchor, (0, 0, 0))
            self._reach(self._depth + height)
            self._spend(nodes, chars)
            return super().compose_node(parent, index)
        anchor = self.peek_event().anchor
        self._depth += 1
        self._reach(self._depth)
        outer, self._deepest = self._deepest, self._depth
        before = (self._nodes, self._chars)
        self._spend(1, 0)
        node = super().compose_node(parent, index)
        if anchor is not None:
            height = self._deepest - self._depth + 1
            self._cost[anchor] = (self._nodes - before[0], self._chars - before[1], height)
        self._deepest = max(outer, self._deepest)
        self._depth -= 1
        return node

    unique_keys = False  # set per load: a key twice in one mapping is refused, not last-wins

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if self.unique_keys and isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if (key.tag, key.value) in seen:
                        raise _Refused(f"has the key {key.value[:40]!r} twice")
                    seen.add((key.tag, key.value))
        return super().construct_mapping(node, deep)

    def compose_scalar_node(self, anchor: Any) -> Any:
        node = super().compose_scalar_node(anchor)
        self._spend(0, len(node.value))
        return node


def _why(exc: yaml.YAMLError) -> str:
    """One line: what PyYAML found and where (its full text quotes the input)."""
    problem = getattr(exc, "problem", None)
    if not problem:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    context = getattr(exc, "context", None)
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    return f"{context + ', ' if context else ''}{problem}{where}"


def loads(
    data: bytes | str,
    *,
    source: str,
    error: type[OntoskillsError],
    max_bytes: int,
    hint: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_chars: int | None = None,
    unique_keys: bool = False,
) -> Any:
    """One YAML document as Python data (safe types only), or `error("{source}: ...")`.

    `max_chars` bounds the scalar characters after alias expansion (default: `max_bytes`,
    so a document never stands for more text than the largest one we would read plain).
    `unique_keys`: a mapping naming a key twice is refused (SKILL.md frontmatter: which of
    two `description:` lines an agent sees must not depend on the reader).
    """
    if len(data) > max_bytes:
        unit = "characters" if isinstance(data, str) else "bytes"
        raise error(f"{source}: {len(data)} {unit}, over the limit of {max_bytes}", hint=hint)
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise error(
            f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})", hint=hint
        ) from None
    chars = max_bytes if max_chars is None else max_chars
    loader = _BoundedLoader(text, max_depth, max_nodes, chars)
    loader.unique_keys = unique_keys
    try:
        return loader.get_single_data()
    except _Refused as exc:
        raise error(f"{source}: YAML {exc}", hint=hint) from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: invalid YAML ({_why(exc)})", hint=hint) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a scalar no type can hold
        raise error(f"{source}: invalid YAML ({exc})", hint=hint) from None
    except RecursionError:
        raise error(f"{source}: YAML nested too deeply to read", hint=hint) from None
    except MemoryError:
        raise error(f"{source}: too large to read", hint=hint) from None
    finally:
        loader.dispose()
