"""How an MCP tool becomes a mycode ``Tool``; the ``[mcp]`` options."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mycode_core.records import Tool
from mycode_mcp_bridge.config import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MAX_CALL_TIME,
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_STARTUP_TIMEOUT,
)

PLUGIN = "mcp_bridge"
_log = logging.getLogger("mcp.mycode_bridge")
"""Under ``mcp``: its records go to the server's log (:mod:`mycode_mcp_bridge.serverlog`)."""
MAX_DESCRIPTION = 2048


@dataclass
class Options:
    """``[mcp]`` settings that shape the bridge."""

    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    max_call_time: float = DEFAULT_MAX_CALL_TIME
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> Options:
        """Read ``[mcp]`` over Claude Code's ``MCP_TIMEOUT`` / ``MCP_TOOL_TIMEOUT`` (ms) and the
        defaults; bad values are ignored."""
        out = cls()
        variables = {"startup_timeout": "MCP_TIMEOUT", "call_timeout": "MCP_TOOL_TIMEOUT"}
        for attr, variable in variables.items():
            with contextlib.suppress(ValueError):
                if (milliseconds := float(os.environ.get(variable, "0"))) > 0:
                    setattr(out, attr, milliseconds / 1000)
        for key, attr, kind in (
            ("startup_timeout", "startup_timeout", float),
            ("call_timeout", "call_timeout", float),
            ("tool_timeout", "call_timeout", float),
            ("max_call_time", "max_call_time", float),
            ("max_output_chars", "max_output_chars", int),
        ):
            try:
                value = kind(section[key])
            except (KeyError, TypeError, ValueError):
                continue
            if value > 0:
                setattr(out, attr, value)
        return out


def tool_traits(annotations: Any) -> dict[str, Any]:
    """``concurrency_safe`` / ``read_only`` / ``risk`` from an MCP tool's annotations."""
    read_only = bool(getattr(annotations, "read_only_hint", None))
    destructive = getattr(annotations, "destructive_hint", None) is True
    if read_only:
        return {"concurrency_safe": True, "read_only": True, "risk": "low"}
    return {
        "concurrency_safe": False,
        "read_only": False,
        "risk": "high" if destructive else "medium",
    }


def callable_tool(tool: Any) -> bool:
    """Tools that require MCP tasks (``execution.taskSupport == "required"``) cannot be called."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) != "required"


_SCHEMA_DATA = frozenset({"default", "const", "enum", "examples"})
"""Keywords whose values are data, not schemas: never rewritten."""


def defaults_optional(schema: Any) -> Any:
    """``schema`` with no property both ``required`` and given a ``default``, at any depth.

    Schemas generated from zod (Playwright MCP's ``scale``, ``level``) list defaulted properties
    as required, yet the server fills them in; leaving them required would make the model's
    call fail validation here for a value the server never needed."""
    if isinstance(schema, list):
        return [defaults_optional(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: value if key in _SCHEMA_DATA else defaults_optional(value)
        for key, value in schema.items()
    }
    properties, required = out.get("properties"), out.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        out["required"] = [
            name
            for name in required
            if not (isinstance(properties.get(name), dict) and "default" in properties[name])
        ]
    return out


NOT_AN_OBJECT = "its input is not a JSON object"
TASK_ONLY = "it runs only as an MCP task"


def lenient_listing(message: Any, left_out: dict[str, str] | None = None) -> Any:
    """A ``tools/list`` answer read leniently, in place: the SDK's check rejects the whole list
    (so the whole server) for one ``inputSchema`` or ``outputSchema`` with no ``"type"`` (``{}``,
    ``{"properties": ...}``, which many servers send); such a schema gets ``"type": "object"``,
    the only type MCP allows there. A tool that still cannot be called (no name, an input of
    another type) is left out, one line in the server's log and its name, with the reason,
    in ``left_out``. ``message`` is any message read from the server."""
    result = getattr(getattr(message, "message", None), "result", None)
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return message
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        for key in ("inputSchema", "outputSchema"):
            schema = tool.get(key)
            if isinstance(schema, dict) and "type" not in schema:
                tool[key] = {"type": "object", **schema}
            elif isinstance(schema, dict) and _object_or_null(schema.get("type")):
                tool[key] = {**schema, "type": "object"}  # arguments are never null
            elif key == "inputSchema" and not isinstance(schema, dict):
                tool[key] = {"type": "object"}
    kept = [t for t in tools if _callable_entry(t)]
    for tool in tools:
        if not _callable_entry(tool):
            name = tool.get("name") if isinstance(tool, dict) else None
            _log.warning("tool %r left out: %s", name, NOT_AN_OBJECT)
            if left_out is not None and isinstance(name, str):
                left_out[name] = NOT_AN_OBJECT
    tools[:] = kept
    return message


KNOWN_CONTENT = frozenset({"text", "image", "audio", "resource_link", "resource"})
"""The content block types of MCP (2025-11-25) that the SDK reads."""


def lenient_content(message: Any) -> Any:
    """An answer read leniently, in place: a block of ``content`` of a type this SDK does not
    know (one of a later protocol revision, or a server's own) would make the SDK refuse the
    whole result, so the model would learn nothing of what the tool did; it becomes a text
    block saying what was left out. ``message`` is any message read from the server."""
    result = getattr(getattr(message, "message", None), "result", None)
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return message
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if isinstance(kind, str) and kind not in KNOWN_CONTENT:
            _log.warning("a result block of unknown type %r left out", kind)
            content[index] = {"type": "text", "text": f"[{kind} content, not shown]"}
    return message


def _object_or_null(kind: Any) -> bool:
    """A ``type`` list of an object that may also be null (``["object", "null"]``, as some
    schema generators write an optional model): read as an object."""
    return isinstance(kind, list) and "object" in kind and set(kind) <= {"object", "null"}


def _callable_entry(tool: Any) -> bool:
    return (
        isinstance(tool, dict)
        and isinstance(tool.get("name"), str)
        and tool["inputSchema"].get("type") == "object"
    )


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError):
        return False
    return True


def python_patterns(schema: Any) -> Any:
    """``schema`` without the ``pattern`` keywords Python's ``re`` cannot read, at any depth:
    a pattern in JavaScript's dialect (``\\p{L}``) would make the whole tool invalid here; the
    server still checks it."""
    if isinstance(schema, list):
        return [python_patterns(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: value if key in _SCHEMA_DATA else python_patterns(value)
        for key, value in schema.items()
        if not (key == "pattern" and isinstance(value, str) and not _compiles(value))
    }


def make_tool(server: str, mcp_tool: Any, exposed: str, handler: Callable[..., Any]) -> Tool:
    """The mycode tool for one MCP tool: its description, its schema (with
    :func:`defaults_optional` and :func:`python_patterns`), its traits."""
    description = (mcp_tool.description or mcp_tool.title or mcp_tool.name).strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    given = mcp_tool.input_schema
    schema = python_patterns(defaults_optional(given)) if isinstance(given, dict) else {}
    return Tool(
        name=exposed,
        description=f"[MCP {server}] {description}",
        input_schema=schema or {"type": "object"},
        handler=handler,
        plugin=PLUGIN,
        **tool_traits(mcp_tool.annotations),
    )
