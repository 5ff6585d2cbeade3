"""The `ontoskill` tool as plain JSON: what tools/list says of it, with no SDK import.

`declared.TOOL` is the SDK's model of this very dict; `early.py` answers a handshake-era
`tools/list` from it before the SDK is loaded (tests/server/test_early_initialize.py compares
that answer with the SDK's for every version).
"""

from __future__ import annotations

from typing import Any

from ..query import QUERY_MAX_CHARS
from ..search import MAX_TOP_K

TOOL_NAME = "ontoskill"
TOOL_TITLE = "OntoSkills: find a skill, read its overview and parts"
TOOL_DESCRIPTION = (
    "Find and load OntoSkills: expert, structured skills (procedures, rules, pitfalls, code "
    "examples, scripts) installed on this machine. Call it BEFORE starting a task that a "
    "specialised skill could cover (documents, PDFs, spreadsheets, testing, debugging, "
    "deployment, design, data, security, ...).\n"
    "- `q` in plain words (e.g. 'fill a PDF form', 'write a failing test first') returns the "
    "best matching skills ranked by relevance and trust, each with its id, description and the "
    "intents that matched.\n"
    "- `q` set to a skill id from those results (e.g. 'acme/docs/pdf' or just 'pdf') returns "
    "that skill sized for one answer: the whole skill when it is small, else an overview "
    "(description, requirements, the most severe knowledge rules, the workflow outline, the "
    "on-disk path of its scripts and assets) and an index of its parts with their sizes.\n"
    "- `q` set to '<skill id>#<part id>' (e.g. 'acme/docs/pdf#knowledge', "
    "'acme/docs/pdf#workflow-fill-form') returns that part; a long part comes in pages: "
    "'acme/docs/pdf#knowledge/2'. Every answer names the next call.\n"
    "Typical use: search once, call again with the best id, then ask only for the parts the "
    "task needs."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": {
            "type": "string",
            "minLength": 1,
            "maxLength": QUERY_MAX_CHARS,
            "description": "What you need, in natural language; or a skill id "
            "(author/pkg/skill or skill) for that skill's overview; or '<skill id>#<part id>' "
            "(page N: '<skill id>#<part id>/N') for one part of it.",
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_TOP_K,
            "default": 5,
            "description": f"How many search results to return (1-{MAX_TOP_K}).",
        },
    },
    "required": ["q"],
    "additionalProperties": False,
}

ANNOTATIONS: dict[str, bool] = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def tool_json() -> dict[str, Any]:
    """The tool as tools/list puts it on the wire (camelCase keys)."""
    return {
        "name": TOOL_NAME,
        "title": TOOL_TITLE,
        "description": TOOL_DESCRIPTION,
        "inputSchema": INPUT_SCHEMA,
        "annotations": dict(ANNOTATIONS),
    }
