"""Errors every layer shares: :class:`SetupError`, :class:`ToolDefinitionError` and
:func:`error_line`.

A base module: it imports nothing of mycode, so the plugin manager, the runtime and the CLI can
all use it without reaching up a layer.
"""

from __future__ import annotations


class SetupError(Exception):
    """A run cannot start (no model, unknown provider, bad script); exit code 2."""


class ToolDefinitionError(ValueError):
    """A ``@tool`` cannot be built (a bad name, schema or option); ``where`` is the
    ``file:line`` of the decorated function, so the error points into the plugin."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{message} (at {where})" if where else message)
        self.where = where


def error_line(exc: BaseException) -> str:
    """An exception as one readable line: ``Type: message`` (pydantic: the first error)."""
    errors = getattr(exc, "errors", None)
    text = ""
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            text = str(first.get("msg", "")).removeprefix("Value error, ")
            text = f"{where}: {text}" if where and text else text
        except (IndexError, TypeError, AttributeError, KeyError):
            text = ""
    if not text:
        text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
