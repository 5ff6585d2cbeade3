"""What one skill's context walk may spend (extract.py), and what it says it cut.

The budgets bound a hostile module: expanded nodes, characters of literal text, section
depth. Every cut is counted by reason and becomes a line of `notes`, shown to humans and
models, never silent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

# The largest real skill (626 in the public registry) expands ~11k nodes and ~0.5M chars;
# these leave an order of magnitude of room and still bound a hostile module.
MAX_NODES = 200_000
MAX_CHARS = 8_000_000
MAX_DEPTH = 32  # markdown has 6 heading levels; deeper nesting is a crafted graph


class Budget:
    """Counts expanded nodes and emitted characters for one skill; collects what was cut."""

    def __init__(self, max_nodes: int | None = None, max_chars: int | None = None) -> None:
        self.max_nodes = MAX_NODES if max_nodes is None else max_nodes
        self.max_chars = MAX_CHARS if max_chars is None else max_chars
        self.nodes = 0
        self.chars = 0
        self.skipped: Counter[str] = Counter()  # what was not expanded, by reason
        self.seen: dict[tuple[str, Any], str] = {}  # (graph, node) -> where it was shown

    @property
    def exhausted(self) -> bool:
        return self.nodes >= self.max_nodes or self.chars >= self.max_chars

    def admit(self, nodes: list[Any], what: str) -> Iterator[Any]:
        """The nodes while the budgets last; the rest are counted as not loaded."""
        for n, node in enumerate(nodes):
            if self.exhausted:
                self.skipped[f"budget:{what}"] += len(nodes) - n
                return
            self.nodes += 1
            yield node

    def text(self, value: str) -> str:
        """Account for one literal; cut (and say so) once the output budget is spent."""
        room = self.max_chars - self.chars
        if len(value) > room:
            self.skipped["chars"] += 1
            value = value[: max(room, 0)]
        self.chars += len(value)
        return value

    def notes(self) -> list[str]:
        out = []
        if self.skipped["cycle"]:
            out.append(
                f"{self.skipped['cycle']} link(s) from a section back to itself or to an "
                "enclosing section (a cycle in the Turtle) were not followed"
            )
        if self.skipped["shared"]:
            out.append(
                f"{self.skipped['shared']} section(s) reached through more than one parent are "
                "shown once; the other places say where"
            )
        if self.skipped["depth"]:
            out.append(
                f"{self.skipped['depth']} section(s) nested deeper than {MAX_DEPTH} levels "
                "were not expanded"
            )
        cut = sum(n for k, n in self.skipped.items() if k.startswith("budget:"))
        if cut:
            out.append(
                f"the skill is larger than the context limit ({self.max_nodes:,} nodes, "
                f"{self.max_chars:,} characters): {cut:,} further node(s) were not loaded"
            )
        if self.skipped["chars"]:
            out.append(
                f"text was cut at the output limit of {self.max_chars:,} characters "
                f"({self.skipped['chars']:,} literal(s) shortened)"
            )
        return out
