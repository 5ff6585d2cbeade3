"""One result per command: the data it reports, the warnings it emitted, the error it ended on.

Both renderers read it. `--json` prints `to_json()`: the data's keys, or `error`, and always
`warnings` (every warning the command emitted, once each, in order). Text mode printed each
warning on stderr when it happened and then renders the data through the verb's renderer.
Every reported type has an explicit `to_json()`: its keys are a public contract
(tests/cli/test_json_keys.py pins them), so they are written out, never copied from fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import OntoskillsError

SCHEMA_VERSION = 1


class Reported(Protocol):
    """What a verb reports: a typed result (a frozen dataclass, the domain's where the domain
    computed it, else the verb module's) with an explicit `to_json()`; its text renderer
    reads its attributes."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass
class CommandResult:
    data: Reported | None = None
    warnings: list[str] = field(default_factory=list)
    error: OntoskillsError | None = None
    exit_code: int = 0  # a verb that reports and still fails (doctor, registry verify) sets it
    _seen: set[str] = field(default_factory=set, repr=False)

    def warn(self, message: str) -> bool:
        """Record a warning; False when this command already emitted it (each one once)."""
        if message in self._seen:
            return False
        self._seen.add(message)
        self.warnings.append(message)
        return True

    def fail(self, error: OntoskillsError) -> None:
        self.error = error
        self.exit_code = error.exit_code

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            err = self.error
            body: dict[str, Any] = {
                "error": {"message": err.message, "hint": err.hint, "exit_code": err.exit_code}
            }
        else:
            body = self.data.to_json() if self.data is not None else {}
        if "warnings" in body or "schema_version" in body:
            raise AssertionError(f"reserved key in a reported payload: {sorted(body)}")
        return {"schema_version": SCHEMA_VERSION, **body, "warnings": list(self.warnings)}
