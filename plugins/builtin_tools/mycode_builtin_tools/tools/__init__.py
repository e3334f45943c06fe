"""The seven tools of SPEC §3, each declared with the public ``@tool`` API plugins use.

Each module holds one tool: its description, its typed signature (the schema the model sees)
and its implementation, in one function. Path parameters are ``ReadPath``/``WritePath``: the
core resolves them through the workspace boundary, applies path rules and plan mode, and hands
the function a ``pathlib.Path`` (a ``BoundPath``) before it runs — nothing here resolves a
path argument again.
"""

from __future__ import annotations

from mycode_core import Tool

PLUGIN = "builtin_tools"


def build_tools() -> list[Tool]:
    """The seven built-in tools, tagged with this plugin."""
    from mycode_builtin_tools.tools.edit_file import edit_file
    from mycode_builtin_tools.tools.glob_tool import glob
    from mycode_builtin_tools.tools.grep_tool import grep
    from mycode_builtin_tools.tools.read_file import read_file
    from mycode_builtin_tools.tools.run_command import run_command
    from mycode_builtin_tools.tools.todo import todo_write
    from mycode_builtin_tools.tools.write_file import write_file

    tools = [read_file, write_file, edit_file, glob, grep, run_command, todo_write]
    return [t.model_copy(update={"plugin": PLUGIN}) for t in tools]
