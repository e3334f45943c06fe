"""mycode: a plugin-first coding agent for the terminal.

The public surface for plugin authors: the names below (records from :mod:`mycode_core.records`)
plus :mod:`~mycode_core.paths`, :mod:`~mycode_core.safegit`, :mod:`~mycode_core.project_files`
and :mod:`~mycode_core.testing`, resolved lazily so that ``mycode --version`` imports nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "hookimpl": "mycode_core.hookspecs",
    "tool": "mycode_core.tooling",
    "ReadPath": "mycode_core.tooling",
    "WritePath": "mycode_core.tooling",
    "subscribe": "mycode_core.observers",
    "Tool": "mycode_core.records",
    "CallApproval": "mycode_core.records",
    "ToolResult": "mycode_core.records",
    "ContextSection": "mycode_core.records",
    "SlashCommand": "mycode_core.records",
    "SlashResult": "mycode_core.records",
    "RunContext": "mycode_core.records",
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:
    from mycode_core.hookspecs import hookimpl as hookimpl
    from mycode_core.observers import subscribe as subscribe
    from mycode_core.records import CallApproval as CallApproval
    from mycode_core.records import ContextSection as ContextSection
    from mycode_core.records import RunContext as RunContext
    from mycode_core.records import SlashCommand as SlashCommand
    from mycode_core.records import SlashResult as SlashResult
    from mycode_core.records import Tool as Tool
    from mycode_core.records import ToolResult as ToolResult
    from mycode_core.tooling import ReadPath as ReadPath
    from mycode_core.tooling import WritePath as WritePath
    from mycode_core.tooling import tool as tool


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mycode_core' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
