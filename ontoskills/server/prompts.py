"""Prompts (clients show them as slash commands) and argument completion.

* Prompt `ontoskill(q)`, always: what the tool answers for `q` (a task: the ranked skills; a
  skill id: its overview; `id#part`: that part), as one user message, so a person can pull a
  skill into the conversation by hand.
* With `serve --prompts`: one prompt per served skill, no arguments, its overview. Named by
  the skill's last segment when that is unique among the served skills, else
  `<package>-<skill>`, else `<author>-<package>-<skill>`; listed 200 a page.
* `completion/complete`: for `ontoskill`'s `q` when it looks like an id (no spaces): skill
  keys and short names starting with it, and `<id>#<part>` once it holds a `#`; for the
  `skill://` templates: authors, packages, skill names and file paths. Anything else gets an
  empty list (completion is a hint, never an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..asciinum import uint
from ..errors import OntoskillsError
from ..manifest import tier_rank
from .skills_ext import FILE_TEMPLATE, TEMPLATE, Skills

if TYPE_CHECKING:
    from .app import ServeOptions, Service

PROMPT_NAME = "ontoskill"
PROMPTS_PAGE = 200
MAX_VALUES = 100  # the spec's cap per completion answer

ONTOSKILL_PROMPT = types.Prompt(
    name=PROMPT_NAME,
    title="OntoSkills: load a skill",
    description="Put an installed skill into the conversation: give a task in plain words "
    "(the best matching skills), a skill id (its overview) or '<id>#<part>' (that part).",
    arguments=[
        types.PromptArgument(
            name="q",
            description="A task, a skill id (acme/docs/pdf or pdf) or '<skill id>#<part id>'.",
            required=True,
        )
    ],
)


@dataclass(frozen=True)
class SkillPrompt:
    name: str
    key: str
    description: str


def skill_prompts(service: Service, min_trust: str | None) -> list[SkillPrompt]:
    """One prompt per served skill, with names that are unique and stable."""
    summaries = service.skills(min_trust=min_trust)
    taken: dict[str, int] = {}
    candidates = []
    for s in summaries:
        author, pkg, skill = s.key.split("/", 2)
        names = (skill, f"{pkg}-{skill}", f"{author}-{pkg}-{skill}")
        candidates.append((s, names))
        for n in names:
            taken[n] = taken.get(n, 0) + 1
    out = []
    for s, names in candidates:
        name = next((n for n in names if taken[n] == 1), names[-1])
        description = " ".join(s.description.split())
        if len(description) > 300:
            description = description[:299].rstrip() + "…"
        out.append(SkillPrompt(name, s.key, description or s.key))
    return out


def list_prompts(
    service: Service, options: ServeOptions, cursor: str | None
) -> types.ListPromptsResult:
    prompts = [ONTOSKILL_PROMPT]
    if options.prompts:
        prompts += [
            types.Prompt(name=p.name, title=p.key, description=p.description)
            for p in skill_prompts(service, options.min_trust)
        ]
    start = offset_cursor(cursor)
    page = prompts[start : start + PROMPTS_PAGE]
    more = start + PROMPTS_PAGE < len(prompts)
    return types.ListPromptsResult(
        prompts=page, next_cursor=str(start + PROMPTS_PAGE) if more else None
    )


def get_prompt(
    service: Service, options: ServeOptions, name: str, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    from .app import ToolInputError, check_arguments, run_tool, skill_result

    if name == PROMPT_NAME:
        try:
            q, top_k = check_arguments({"q": (arguments or {}).get("q")})
        except ToolInputError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        result = run_tool(service, q, top_k, options)
        description = f"OntoSkills: {q[:80]}"
    else:
        found = None
        if options.prompts:
            found = next(
                (p for p in skill_prompts(service, options.min_trust) if p.name == name), None
            )
        if found is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name!r}")
        answer = skill_result(service, found.key, options)
        if answer is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name!r}")
        result, description = answer, found.description
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return types.GetPromptResult(
        description=description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


# ---------------------------------------------------------------------- completion
def _done(values: list[str]) -> types.CompleteResult:
    unique = list(dict.fromkeys(values))
    return types.CompleteResult(
        completion=types.Completion(
            values=unique[:MAX_VALUES], total=len(unique), has_more=len(unique) > MAX_VALUES
        )
    )


def complete(
    service: Service, skills: Skills, min_trust: str | None, params: types.CompleteRequestParams
) -> types.CompleteResult:
    ref, arg = params.ref, params.argument
    given = (params.context.arguments if params.context else None) or {}
    try:
        if isinstance(ref, types.PromptReference) and ref.name == PROMPT_NAME and arg.name == "q":
            return _done(_complete_q(service, min_trust, arg.value))
        if isinstance(ref, types.ResourceTemplateReference) and ref.uri in (
            TEMPLATE.uri_template,
            FILE_TEMPLATE.uri_template,
        ):
            return _done(_complete_uri(service, skills, arg.name, arg.value, given))
    except OntoskillsError:
        pass  # a hint, not an answer: nothing to suggest
    return _done([])


def _complete_q(service: Service, min_trust: str | None, value: str) -> list[str]:
    text = value.strip()
    if any(c.isspace() for c in text):
        return []  # words with spaces are a search, not an id
    if "#" in text:
        skill, _, part = text.rpartition("#")
        key = service.resolve(skill)
        if key is None or not _trusted(service, key, min_trust):
            return []
        parts = service.disclosure(key).parts.parts
        return [f"{skill}#{pid}" for pid in parts if pid.startswith(part)]
    keys = [s.key for s in service.skills(min_trust=min_trust)]
    low = text.lower()
    full = [k for k in keys if k.startswith(low)]
    short = sorted({k.rsplit("/", 1)[1] for k in keys if k.rsplit("/", 1)[1].startswith(low)})
    return sorted(full) + [s for s in short if s not in full]


def _trusted(service: Service, key: str, min_trust: str | None) -> bool:
    if min_trust is None:
        return True
    floor = tier_rank(min_trust)
    return any(s.key == key and tier_rank(s.trust_tier) >= floor for s in service.skills())


def _complete_uri(
    service: Service, skills: Skills, name: str, value: str, given: dict[str, Any]
) -> list[str]:
    fs = skills.fs(service)
    roots = [fs.names().roots[k].removeprefix("skill://").split("/") for k in fs.served_keys()]
    author, package, skill = given.get("author"), given.get("package"), given.get("skill")

    def match(root: list[str]) -> bool:
        return (author is None or root[0] == author) and (package is None or root[1] == package)

    if name == "author":
        return sorted({r[0] for r in roots if r[0].startswith(value)})
    if name == "package":
        return sorted({r[1] for r in roots if match(r) and r[1].startswith(value)})
    if name == "skill":
        return sorted({r[2] for r in roots if match(r) and r[2].startswith(value)})
    if name == "path" and author and package and skill:
        found = fs.locate(f"skill://{author}/{package}/{skill}")
        if found is not None:
            files = fs.served(found[0]).files
            return sorted(f.path for f in files if f.path.startswith(value))
    return []


def offset_cursor(cursor: str | None) -> int:
    """The start offset an offset-paged list's cursor names (prompts/list, resources/list);
    anything but a non-negative integer is the protocol's invalid-params error."""
    start = uint(cursor) if cursor else 0  # ASCII digits only: int() would take '١' or ' 1_0'
    if start is None:
        raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor")
    return start
