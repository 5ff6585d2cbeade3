"""The agents that read Agent Skills folders: where each one looks, from its own docs.

Each row names the folder a project keeps (relative to the project root) and the user-wide
one (relative to the user's home folder), the page that documents both, and, where the agent
documents it, how many characters its skill listing holds (names and descriptions, the part
of every skill that sits in the model's context at all times). docs/AGENTS.md has the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..choices import Choice


@dataclass(frozen=True)
class Agent:
    id: str
    label: str
    project: str  # POSIX, relative to the project root
    user: str  # POSIX, relative to the user's home folder
    doc: str
    # Characters the agent keeps for its skill listing (None: not documented), how many of
    # one skill's characters it counts at most, and where the figure comes from.
    listing_chars: int | None = None
    entry_chars: int | None = None
    listing_note: str = ""


AGENTS: dict[str, Agent] = {
    a.id: a
    for a in (
        Agent(
            "claude",
            "Claude Code",
            ".claude/skills",
            ".claude/skills",
            "https://code.claude.com/docs/en/skills",
            # 1% of the context window (8,000 characters when it is not known: ~2,000 tokens,
            # 1% of a 200k window); each entry is cut at 1,536 characters.
            listing_chars=8_000,
            entry_chars=1_536,
            listing_note="about 1% of its context window",
        ),
        Agent(
            "codex",
            "Codex",
            ".agents/skills",
            ".agents/skills",
            "https://developers.openai.com/codex/skills",
            listing_chars=8_000,  # ~2% of the window, 8,000 characters when unknown
            listing_note="about 2% of its context window, 8,000 characters when unknown",
        ),
        Agent(
            "copilot",
            "GitHub Copilot",
            ".github/skills",
            ".copilot/skills",
            "https://docs.github.com/en/copilot/concepts/agents/about-agent-skills",
        ),
        Agent(
            "cursor",
            "Cursor",
            ".cursor/skills",
            ".cursor/skills",
            "https://cursor.com/docs/context/skills",
        ),
        Agent(
            "gemini",
            "Gemini CLI",
            ".gemini/skills",
            ".gemini/skills",
            "https://geminicli.com/docs/cli/using-agent-skills/",
        ),
        Agent(
            "opencode",
            "OpenCode",
            ".opencode/skills",
            ".config/opencode/skills",
            "https://opencode.ai/docs/skills/",
        ),
    )
}

# The `--agent` words, derived from the table (as clientconfig's ClientName is).
if TYPE_CHECKING:

    class AgentName(Choice): ...

else:
    AgentName = Choice("AgentName", {a.upper(): a for a in AGENTS})

ENTRY_OVERHEAD = 4  # "- name: description\n": the separators around one listed skill


def listing_size(agent: Agent, entries: list[tuple[str, str]]) -> int:
    """Characters the listing of these (name, description) pairs takes in `agent`'s budget."""
    total = 0
    for name, description in entries:
        n = len(name) + len(" ".join(description.split())) + ENTRY_OVERHEAD
        total += min(n, agent.entry_chars) if agent.entry_chars else n
    return total
