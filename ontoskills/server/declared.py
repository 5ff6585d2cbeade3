"""What the server declares to clients: the tool (name, description, input schema,
annotations), the schema resource, the instructions and the cache hints. Kept apart from the
handlers (app.py) so what a client sees is read in one place."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.caching import CacheHint

from ..query import QUERY_MAX_CHARS
from ..search import MAX_TOP_K

TOOL_NAME = "ontoskill"
SCHEMA_URI = "ontology://schema"
RESOURCES_PAGE = 200
SCHEMA_RESOURCE = types.Resource(
    uri=SCHEMA_URI,
    name="ontology-schema",
    title="OntoSkills ontology schema",
    description="How to read a skill with the tool (search, overview, parts) and the classes "
    "and properties the installed skills use (compact JSON).",
    mime_type="application/json",
)

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

TOOL = types.Tool(
    name=TOOL_NAME,
    title="OntoSkills: find a skill, read its overview and parts",
    description=TOOL_DESCRIPTION,
    input_schema=INPUT_SCHEMA,
    annotations=types.ToolAnnotations(
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)
INSTRUCTIONS = (
    f"Call `{TOOL_NAME}` with a short description of the task to find the right "
    f"installed skill, then call it again with the skill id for its overview, then "
    f"with '<skill id>#<part id>' for the parts you need. `{SCHEMA_URI}` describes "
    f"the flow and the ontology."
)
CACHE_HINTS: dict[Any, CacheHint] = {  # keys: the SDK's literal method names
    "tools/list": CacheHint(ttl_ms=3_600_000, scope="public"),
    # Skills are installed and removed live: the SKILL.md list is only briefly fresh.
    "resources/list": CacheHint(ttl_ms=5_000, scope="public"),
    "resources/templates/list": CacheHint(ttl_ms=3_600_000, scope="public"),
    "prompts/list": CacheHint(ttl_ms=5_000, scope="public"),
    # Installs are picked up live, so reads are only briefly fresh.
    "resources/read": CacheHint(ttl_ms=5_000, scope="public"),
}
