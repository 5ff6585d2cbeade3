"""What the server declares to clients: the tool (name, description, input schema,
annotations), the schema resource, the instructions and the cache hints. Kept apart from the
handlers (app.py) so what a client sees is read in one place."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.caching import CacheHint

# The tool as plain JSON (no SDK import): early.py answers tools/list from it before the SDK
# is loaded; here it is the SDK's model, for the handlers.
from .toolspec import INPUT_SCHEMA as INPUT_SCHEMA
from .toolspec import TOOL_DESCRIPTION as TOOL_DESCRIPTION
from .toolspec import TOOL_NAME, tool_json

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

TOOL = types.Tool.model_validate(tool_json())
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
