"""The typed model of `intents.json`: a package's precomputed intent vectors (model name,
dimension, one embedding per intent with the skills it points to). Bounded in vectors,
dimension and total floats before any vector is converted (limits.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import jsonio, limits
from .errors import FormatError, LimitExceededError
from .tables import Table


@dataclass(frozen=True)
class IntentVector:
    intent: str
    embedding: tuple[float, ...]
    skills: tuple[str, ...]


@dataclass(frozen=True)
class IntentsFile:
    model: str
    dimension: int
    intents: tuple[IntentVector, ...]


def parse_intents(data: bytes, *, source: str) -> IntentsFile:
    """Bounded in vectors, dimension and total floats (limits.py), checked before any
    vector is converted: a hostile file cannot make us build more than ~64 MB of floats."""
    raw = jsonio.loads(
        data, source=source, max_bytes=limits.MAX_INTENTS_BYTES, max_items=limits.MAX_INTENTS_ITEMS
    )
    obj = Table(raw, source, FormatError, null_is_absent=True)
    model = obj.required("model", str)
    dimension = obj.required("dimension", int)
    if not 1 <= dimension <= limits.MAX_INTENT_DIMENSION:
        raise LimitExceededError(
            f"{source}: dimension {dimension} outside 1..{limits.MAX_INTENT_DIMENSION}"
        )
    items = obj.required("intents", list)
    if len(items) > limits.MAX_INTENT_VECTORS:
        raise LimitExceededError(
            f"{source}: {len(items)} intent vectors, over the {limits.MAX_INTENT_VECTORS} limit"
        )
    if len(items) * dimension > limits.MAX_INTENT_FLOATS:
        raise LimitExceededError(
            f"{source}: {len(items)} x {dimension} floats, over the "
            f"{limits.MAX_INTENT_FLOATS} limit"
        )
    out = []
    for i, item in enumerate(items):
        it = obj.child(item, f"intents[{i}]")
        emb = it.required("embedding", list)
        if len(emb) != dimension:
            raise FormatError(
                f"{it.where}: embedding has {len(emb)} values, dimension says {dimension}"
            )
        if not all(jsonio.is_finite_number(x) for x in emb):
            raise FormatError(f"{it.where}: embedding must hold finite numbers")
        out.append(
            IntentVector(
                intent=it.required("intent", str),
                embedding=tuple(float(x) for x in emb),
                skills=tuple(it.list_of("skills", str)),
            )
        )
    return IntentsFile(model=model, dimension=dimension, intents=tuple(out))
