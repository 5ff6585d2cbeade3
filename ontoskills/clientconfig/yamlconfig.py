"""Merge our entry into a YAML client config (goose's config.yaml), refusing what we cannot
write back as it was.

PyYAML reads and writes the data, not the text: comments, anchors and custom tags would be
lost or changed, so a file that has any is refused (exit 4, file untouched) and the user adds
the entry by hand from `--print`. Otherwise the file is rewritten from its data plus ours,
keys in their order, and read back to check it says exactly the old data plus our entry.
"""

from __future__ import annotations

from typing import Any, Literal

import yaml

from .. import yamlio
from ..errors import FormatError
from .merge import covers, malformed, merged_entry
from .spec import Target

Action = Literal["added", "updated", "unchanged"]
# goose's config.yaml holds settings and a few extensions (KBs); PyYAML reads ~1 MB/s
MAX_BYTES = 1024 * 1024


def dumps(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _why_not_plain(text: str) -> str | None:
    """What in the file PyYAML would not keep: comments, anchors/aliases, tags."""
    scalars: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.AliasToken | yaml.AnchorToken):
                return "it uses YAML anchors or aliases"
            if isinstance(token, yaml.TagToken):
                return "it uses YAML tags"
            if isinstance(token, yaml.ScalarToken):
                scalars.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError as exc:
        return f"invalid YAML ({str(exc).splitlines()[0]})"
    starts = iter(sorted(scalars))
    span = next(starts, None)
    for i, ch in enumerate(text):
        while span is not None and span[1] <= i:
            span = next(starts, None)
        if ch == "#" and not (span is not None and span[0] <= i < span[1]):
            return "it has comments, which we could not keep"
    return None


def _load(target: Target, data: bytes) -> Any:
    """The file's data through the one bounded YAML reader (size, depth, aliases)."""
    try:
        return yamlio.loads(data, source=str(target.path), error=FormatError, max_bytes=MAX_BYTES)
    except FormatError as exc:
        raise malformed(target, exc.message.removeprefix(f"{target.path}: ")) from None


def merge(
    target: Target, old: bytes | None, name: str, entry: dict[str, Any], managed: Any
) -> tuple[bytes, Action]:
    doc: Any = {}
    if old is not None and old.strip():
        doc = _load(target, old)  # bounded first: the scan below then reads a sane file
        why = _why_not_plain(old.decode("utf-8"))
        if why is not None:
            raise malformed(target, why)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise malformed(target, "the top level is not a mapping")
    servers = doc.setdefault(target.key, {})
    if servers is None:
        servers = doc[target.key] = {}
    if not isinstance(servers, dict):
        raise malformed(target, f"{target.key!r} is not a mapping")
    current = servers.get(name)
    if covers(current, entry, managed):
        return b"", "unchanged"
    action: Action = "updated" if current is not None else "added"
    servers[name] = merged_entry(current, entry, managed)
    new = dumps(doc)
    if _load(target, new.encode("utf-8")) != doc:  # never write what reads back differently
        raise FormatError(f"{target.path}: cannot be written back as it was; not changing it")
    return new.encode("utf-8"), action
