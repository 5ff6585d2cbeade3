"""How domain code reports progress without printing: the CLI passes a Reporter in."""

from __future__ import annotations

from typing import Protocol


class Reporter(Protocol):
    def stage(self, name: str, total: int | None = None) -> None:
        """Start a phase ("resolving", "fetching 120 files"); total enables a progress bar."""

    def advance(self, n: int = 1) -> None: ...

    def note(self, message: str) -> None:
        """Informational line (suppressed by --quiet)."""

    def warn(self, message: str) -> None:
        """Something the user should know; never suppressed."""


class NullReporter:
    """Reporter for library use and tests: collects warnings, prints nothing."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.notes: list[str] = []

    def stage(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        self.notes.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
