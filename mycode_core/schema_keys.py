"""Keys naming what a tool's input schema is built from, so a built schema (a few ms through
pydantic) is remembered across start-ups; the CLI keeps :data:`BUILT_SCHEMAS` in ``MYCODE_HOME``.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import VERSION as PYDANTIC_VERSION
from pydantic.fields import FieldInfo

BUILT_SCHEMAS: dict[str, dict[str, Any]] = {}  # input schemas built, by :func:`schema_key`


def schema_key(func: Callable[..., Any], fields: dict[str, Any]) -> str | None:
    """A key for everything the schema of ``fields`` (name → (annotation, default)) is made
    of (the ``repr`` of each), or ``None`` when a ``repr`` would not show its content (a model,
    an enum, a custom class)."""
    if not all(_plain(annotation) for annotation, _ in fields.values()):
        return None
    parts = [
        (name, repr(annotation), repr(default)) for name, (annotation, default) in fields.items()
    ]
    text = repr((func.__module__, func.__qualname__, PYDANTIC_VERSION, parts))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


_PLAIN_TYPES = (str, int, float, bool, bytes, type(None))
_PLAIN_ORIGINS = (list, dict, tuple, set, frozenset, types.UnionType)


def _plain(annotation: Any) -> bool:
    """Whether ``repr(annotation)`` names all that its schema depends on."""
    if annotation is Any or annotation in _PLAIN_TYPES:
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return all(isinstance(arg, _PLAIN_TYPES) for arg in args)
    if origin is Annotated:
        return _plain(args[0]) and all(_plain_metadata(extra) for extra in args[1:])
    if origin in _PLAIN_ORIGINS or origin is Union:
        return all(arg is Ellipsis or _plain(arg) for arg in args)
    return False


def _plain_metadata(extra: Any) -> bool:
    if isinstance(extra, str):
        return True
    if isinstance(extra, FieldInfo):
        return not callable(extra.json_schema_extra)
    kind = type(extra)
    if kind.__module__ == "pydantic.json_schema" and kind.__name__ == "WithJsonSchema":
        return isinstance(getattr(extra, "json_schema", None), dict)  # a dataclass: full repr
    return kind.__module__ == "annotated_types"  # constraints: dataclasses, full repr
