"""The seven tools of SPEC §3 as :class:`~mycode_core.records.Tool` records.

Handlers are imported on first use, so registering the tools costs almost nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mycode_core.records import Tool, ToolResult

PLUGIN = "builtin_tools"


def _lazy(module: str, name: str) -> Callable[[dict[str, Any], Any], Any]:
    """A handler that imports ``module.name`` when first called, and never raises."""

    def handler(arguments: dict[str, Any], context: Any) -> Any:
        func = getattr(importlib.import_module(f"mycode_builtin_tools.tools.{module}"), name)
        try:
            return func(arguments, context)
        except Exception as exc:  # noqa: BLE001 - a tool failure is a result, not a crash
            return ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")

    handler.__name__ = name
    handler.__doc__ = f"Lazy handler for the {name} tool."
    return handler


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
    }


PATH = {"type": "string", "description": "File path, relative to the workspace root."}

READ_FILE = (
    "Read a text file. Returns numbered lines (line number, tab, text). Reads up to 2000 lines "
    "from offset (1-based); the result says when the view is partial and which offset to "
    "read on from. Lines over 2000 characters are cut. Binary files are refused. Read a file "
    "before editing or overwriting it. Also reads saved command output (artifact paths)."
)
WRITE_FILE = (
    "Write a whole file, creating parent folders. Overwriting an existing file requires a "
    "read_file of it first. Prefer edit_file for changes to existing files."
)
EDIT_FILE = (
    "Replace an exact string in a file read earlier with read_file. old_string must match "
    "the file exactly (without line-number prefixes) and be unique unless replace_all is "
    "true; include surrounding lines to make it unique. Line endings, encoding and the rest "
    "of the file are kept. Refused if the file changed since it was read."
)
GLOB = (
    "Find files by name pattern, e.g. '**/*.py' or 'src/**/test_*.{js,ts}'. '*' stays in one "
    "folder, '**' crosses folders. Respects .gitignore; skips .git, node_modules and "
    "virtualenvs. Newest first, at most 100 results."
)
GREP = (
    "Search file contents with a regular expression (ripgrep syntax). output_mode: "
    "'files_with_matches' (default, file paths), 'content' (matching lines as path:line:text, "
    "with optional context lines) or 'count'. glob filters files (e.g. '*.py'); head_limit "
    "caps the lines returned. Respects .gitignore."
)
RUN_COMMAND = (
    "Run a bash command in the workspace. The working directory persists between calls but "
    "stays inside the workspace. stdin is closed (no interactive prompts). Default timeout "
    "120 s (max 600); on timeout the whole process tree is killed, so start servers in the "
    "background with output redirected to a file. Long output is cut to head and tail; "
    "the full output is saved and its path is given. Reports the exit code."
)
TODO_WRITE = (
    "Replace your task list. Each todo has content, status (pending, in_progress, completed) "
    "and an optional id. Keep exactly one in_progress while working; mark items completed "
    "as soon as they are done."
)


def build_tools() -> list[Tool]:
    """The seven built-in tools, with their schemas, safety flags and risk."""
    return [
        Tool(
            name="read_file",
            description=READ_FILE,
            input_schema=_schema(
                {
                    "path": PATH,
                    "offset": {"type": "integer", "minimum": 1, "description": "First line."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Lines to read."},
                },
                ["path"],
            ),
            handler=_lazy("read_file", "read_file"),
            concurrency_safe=True,
            read_only=True,
            risk="low",
            plugin=PLUGIN,
        ),
        Tool(
            name="write_file",
            description=WRITE_FILE,
            input_schema=_schema(
                {"path": PATH, "content": {"type": "string"}}, ["path", "content"]
            ),
            handler=_lazy("write_file", "write_file"),
            risk="medium",
            plugin=PLUGIN,
        ),
        Tool(
            name="edit_file",
            description=EDIT_FILE,
            input_schema=_schema(
                {
                    "path": PATH,
                    "old_string": {"type": "string", "description": "Exact text to replace."},
                    "new_string": {"type": "string", "description": "Replacement text."},
                    "replace_all": {"type": "boolean", "default": False},
                },
                ["path", "old_string", "new_string"],
            ),
            handler=_lazy("edit_file", "edit_file"),
            risk="medium",
            plugin=PLUGIN,
        ),
        Tool(
            name="glob",
            description=GLOB,
            input_schema=_schema(
                {
                    "pattern": {"type": "string", "description": "Glob pattern."},
                    "path": {"type": "string", "description": "Folder to search (default: root)."},
                },
                ["pattern"],
            ),
            handler=_lazy("glob_tool", "glob"),
            concurrency_safe=True,
            read_only=True,
            risk="low",
            plugin=PLUGIN,
        ),
        Tool(
            name="grep",
            description=GREP,
            input_schema=_schema(
                {
                    "pattern": {"type": "string", "description": "Regular expression."},
                    "path": {"type": "string", "description": "File or folder (default: root)."},
                    "glob": {"type": "string", "description": "Only files matching this glob."},
                    "output_mode": {
                        "type": "string",
                        "enum": ["content", "files_with_matches", "count"],
                    },
                    "case_insensitive": {"type": "boolean"},
                    "context": {"type": "integer", "minimum": 0, "maximum": 50},
                    "head_limit": {"type": "integer", "minimum": 1},
                },
                ["pattern"],
            ),
            handler=_lazy("grep_tool", "grep"),
            concurrency_safe=True,
            read_only=True,
            risk="low",
            plugin=PLUGIN,
        ),
        Tool(
            name="run_command",
            description=RUN_COMMAND,
            input_schema=_schema(
                {
                    "command": {"type": "string", "description": "Shell command (bash)."},
                    "timeout": {"type": "number", "description": "Seconds (default 120, max 600)."},
                    "description": {"type": "string", "description": "What it does, briefly."},
                },
                ["command"],
            ),
            handler=_lazy("run_command", "run_command"),
            risk="high",
            plugin=PLUGIN,
        ),
        Tool(
            name="todo_write",
            description=TODO_WRITE,
            input_schema=_schema(
                {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string"},
                                "status": {
                                    "type": "string",
                                    "enum": ["pending", "in_progress", "completed"],
                                },
                                "id": {"type": ["string", "integer"]},
                            },
                            "required": ["content", "status"],
                        },
                    }
                },
                ["todos"],
            ),
            handler=_lazy("todo", "todo_write"),
            read_only=True,
            risk="low",
            plugin=PLUGIN,
        ),
    ]
