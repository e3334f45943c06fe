"""``--json-schema``: every ``$ref`` must resolve before the run starts (issue 20, bad input).

:func:`~mycode_core.cli.structured.load_schema` checks the schema against its meta-schema,
which says nothing of where a ``$ref`` points: ``{"$ref": "#/nope"}`` or a remote URL passed,
and the run then failed on the model's first answer. mycode follows references inside the
schema only (and the meta-schemas jsonschema bundles); it never fetches one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _refs(node: Any, root: bool = True) -> Iterator[str]:
    """The ``$ref`` strings of a schema, not descending into subschemas with their own ``$id``
    (a reference there is relative to that id)."""
    if isinstance(node, dict):
        if not root and isinstance(node.get("$id"), str):
            return
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for key, value in node.items():
            if key not in ("$ref", "const", "enum", "default", "examples"):  # not schemas
                yield from _refs(value, root=False)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item, root=False)


def unresolved_ref(schema: dict[str, Any]) -> str | None:
    """The first ``$ref`` of ``schema`` that does not resolve, as one readable line."""
    from jsonschema import validators
    from referencing.exceptions import Unresolvable

    validator = validators.validator_for(schema)(schema)
    resolver = getattr(validator, "_resolver", None)  # jsonschema >= 4.18 (referencing)
    if resolver is None:
        return None
    for ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            return (
                f"$ref {ref!r} does not resolve (mycode follows references inside the schema "
                "only; put the definition under $defs)"
            )
    return None
