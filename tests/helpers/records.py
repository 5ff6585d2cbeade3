"""A catalog record for ranking tests that build a Ranker by hand (no install)."""

from __future__ import annotations

from typing import Any

from ontoskills.catalog.model import SkillRecord


def skill_record(key: str, **fields: Any) -> SkillRecord:
    """The record of skill `key` ("author/pkg/skill"), community tier, no files on disk;
    `fields` override any SkillRecord field (description, intents, trust_tier, ...)."""
    package, skill = key.rsplit("/", 1)
    base: dict[str, Any] = {
        "key": key,
        "package": package,
        "skill_id": skill,
        "identifier": skill,
        "iri": f"urn:{key}",
        "trust_tier": "community",
        "root": "/nonexistent",
        "main_module": "skill.ttl",
    }
    return SkillRecord(**(base | fields))
