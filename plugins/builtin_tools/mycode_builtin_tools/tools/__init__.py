"""The seven tools of SPEC §3, declared with the same public ``@tool`` API plugins use.

Each declaration is a typed signature (the schema the model sees) that forwards to its
implementation module, imported on first use so registering the tools costs almost nothing.
Path parameters are ``ReadPath``/``WritePath``: the core resolves them through the workspace
boundary, applies path rules and plan mode, and records the facts before the handler runs.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mycode_core import ReadPath, RunContext, Tool, ToolResult, WritePath, tool

PLUGIN = "builtin_tools"

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


def _run(module: str, name: str, run: RunContext, /, **arguments: Any) -> ToolResult:
    """Call ``mycode_builtin_tools.tools.<module>.<name>`` with the arguments that were given."""
    func = getattr(importlib.import_module(f"mycode_builtin_tools.tools.{module}"), name)
    given = {key: value for key, value in arguments.items() if value is not None}
    result: ToolResult = func(given, run)
    return result


FilePath = Annotated[ReadPath, "File path, relative to the workspace root."]
Folder = Annotated[ReadPath, "File or folder to search (default: the workspace root)."]


@tool(name="read_file", read_only=True, description=READ_FILE)
def read_file_tool(
    run: RunContext,
    path: FilePath,
    offset: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
    limit: Annotated[int | None, Field(ge=1, description="Lines to read.")] = None,
) -> ToolResult:
    """Read a text file as numbered lines."""
    return _run("read_file", "read_file", run, path=path, offset=offset, limit=limit)


@tool(name="write_file", description=WRITE_FILE)
def write_file_tool(
    run: RunContext,
    path: Annotated[WritePath, "File path, relative to the workspace root."],
    content: str,
) -> ToolResult:
    """Write a whole file."""
    return _run("write_file", "write_file", run, path=path, content=content)


@tool(name="edit_file", description=EDIT_FILE)
def edit_file_tool(
    run: RunContext,
    path: Annotated[WritePath, "File path, relative to the workspace root."],
    old_string: Annotated[str, "Exact text to replace."],
    new_string: Annotated[str, "Replacement text."],
    replace_all: bool = False,
) -> ToolResult:
    """Replace an exact string in a file."""
    return _run(
        "edit_file",
        "edit_file",
        run,
        path=path,
        old_string=old_string,
        new_string=new_string,
        replace_all=replace_all,
    )


@tool(name="glob", read_only=True, description=GLOB)
def find_files(
    run: RunContext,
    pattern: Annotated[str, "Glob pattern."],
    path: Annotated[ReadPath, "Folder to search (default: the workspace root)."] = Path("."),
) -> ToolResult:
    """Find files by name pattern."""
    return _run("glob_tool", "glob", run, pattern=pattern, path=path)


@tool(name="grep", read_only=True, description=GREP)
def search_files(
    run: RunContext,
    pattern: Annotated[str, "Regular expression."],
    path: Folder = Path("."),
    glob: Annotated[str | None, "Only files matching this glob."] = None,
    output_mode: Literal["content", "files_with_matches", "count"] | None = None,
    case_insensitive: bool | None = None,
    context: Annotated[int | None, Field(ge=0, le=50)] = None,
    head_limit: Annotated[int | None, Field(ge=1)] = None,
) -> ToolResult:
    """Search file contents with a regular expression."""
    return _run(
        "grep_tool",
        "grep",
        run,
        pattern=pattern,
        path=path,
        glob=glob,
        output_mode=output_mode,
        case_insensitive=case_insensitive,
        context=context,
        head_limit=head_limit,
    )


@tool(name="run_command", risk="high", timeout=660, description=RUN_COMMAND)
def run_command_tool(
    run: RunContext,
    command: Annotated[str, "Shell command (bash)."],
    timeout: Annotated[float | None, "Seconds (default 120, max 600)."] = None,
    description: Annotated[str | None, "What it does, briefly."] = None,
) -> ToolResult:
    """Run a bash command in the workspace."""
    return _run(
        "run_command", "run_command", run, command=command, timeout=timeout, description=description
    )


class Todo(BaseModel):
    """One item of the task list."""

    content: str
    status: Literal["pending", "in_progress", "completed"]
    id: str | int | None = None


@tool(name="todo_write", read_only=True, concurrency_safe=False, description=TODO_WRITE)
def todo_write_tool(run: RunContext, todos: list[Todo]) -> ToolResult:
    """Replace the task list."""
    items = [todo.model_dump(exclude_none=True) for todo in todos]
    return _run("todo", "todo_write", run, todos=items)


def build_tools() -> list[Tool]:
    """The seven built-in tools, tagged with this plugin."""
    tools = [
        read_file_tool,
        write_file_tool,
        edit_file_tool,
        find_files,
        search_files,
        run_command_tool,
        todo_write_tool,
    ]
    return [t.model_copy(update={"plugin": PLUGIN}) for t in tools]
